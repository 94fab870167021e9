package filetools_test

import (
	"errors"
	"fmt"
	"testing"

	filetools "github.com/filetools/filetools/clients/go"
	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
)

// Watch resumes by itself from its last cursor when the daemon goes away and
// another takes its place on the same address and data directory.
func TestWatchResumesAcrossADaemonRestart(t *testing.T) {
	first := startDaemon(t)
	ctx := testContext(t)
	client := first.client(t, filetools.WithoutSharedStream())
	if _, err := client.CreateWorkspace(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := client.WriteText(ctx, "go", fmt.Sprintf("/f%d.txt", i), "x", filetools.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	since := uint64(0)
	entries := make(chan *filetools.JournalEntry)
	failed := make(chan error, 1)
	go func() {
		for entry, err := range client.Watch(ctx, "go", filetools.WatchOptions{Since: &since}) {
			if err != nil {
				failed <- err
				return
			}
			entries <- entry
		}
	}()
	next := func() *filetools.JournalEntry {
		select {
		case entry := <-entries:
			return entry
		case err := <-failed:
			t.Fatalf("watch: %v", err)
		case <-ctx.Done():
			t.Fatal("no entry in time")
		}
		return nil
	}
	for i := range 3 {
		entry := next()
		if entry.GetCursor() != uint64(i+1) || entry.GetPath() != fmt.Sprintf("/f%d.txt", i) || entry.GetKind() != filetoolsv1.JournalKind_JOURNAL_KIND_CREATED {
			t.Fatalf("entry %d: %v", i, entry)
		}
	}
	first.stop()
	second := startDaemon(t, "--listen", first.address, "--data-dir", first.dataDir)
	other := second.client(t)
	if _, err := other.WriteText(ctx, "go", "/after.txt", "y", filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if entry := next(); entry.GetCursor() != 4 || entry.GetPath() != "/after.txt" || entry.GetActor().GetRpc() != "Write" {
		t.Fatalf("after the restart: %v", entry)
	}
}

func TestWatchFromACursorNoLongerHeldIsCursorOutOfRange(t *testing.T) {
	d := startDaemon(t, "--journal-max-entries", "20")
	ctx := testContext(t)
	client := d.client(t)
	if _, err := client.CreateWorkspace(ctx, "small"); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if _, err := client.WriteText(ctx, "small", fmt.Sprintf("/f%d.txt", i%3), "x", filetools.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	since := uint64(1)
	for _, err := range client.Watch(ctx, "small", filetools.WatchOptions{Since: &since}) {
		var rpcErr *filetools.Error
		if !errors.Is(err, filetools.ErrCursorOutOfRange) || !errors.As(err, &rpcErr) || rpcErr.Metadata["last_cursor"] != "100" {
			t.Fatalf("want CURSOR_OUT_OF_RANGE with last_cursor 100, got %v", err)
		}
		break
	}
	var cursors []uint64
	for entry, err := range client.Journal(ctx, "small", filetools.JournalFilter{AfterCursor: 97}) {
		if err != nil {
			t.Fatal(err)
		}
		cursors = append(cursors, entry.GetCursor())
	}
	if fmt.Sprint(cursors) != "[98 99 100]" {
		t.Fatalf("journal after 97: %v", cursors)
	}
}

package filetools_test

// The client against a real filetoolsd (see daemon_test.go).

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	filetools "github.com/filetools/filetools/clients/go"
	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
)

// numberedLines is "line 1\n" … "line n\n".
func numberedLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

// asError is errors.As into a *filetools.Error, failing the test when err is not one.
func asError(t *testing.T, err error) *filetools.Error {
	t.Helper()
	var fe *filetools.Error
	if !errors.As(err, &fe) {
		t.Fatalf("error %v (%T) is not a *filetools.Error", err, err)
	}
	return fe
}

// expectReason checks a failed call's code and reason, and that errors.Is
// matches the reason's sentinel.
func expectReason(t *testing.T, what string, err error, code codes.Code, sentinel *filetools.Error) *filetools.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error, want %v / %s", what, code, sentinel.Reason)
	}
	fe := asError(t, err)
	if fe.Code != code || fe.Reason != sentinel.Reason {
		t.Errorf("%s: %v / %q, want %v / %q (%v)", what, fe.Code, fe.Reason, code, sentinel.Reason, err)
	}
	if !errors.Is(err, sentinel) {
		t.Errorf("%s: errors.Is(err, Err…%s) is false", what, sentinel.Reason)
	}
	if status.Code(err) != code {
		t.Errorf("%s: status.Code(err) = %v, want %v", what, status.Code(err), code)
	}
	return fe
}

func TestReadTextWindowsAndPaging(t *testing.T) {
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "reading"); err != nil {
		t.Fatal(err)
	}
	content := numberedLines(1, 25)
	written, err := client.WriteText(ctx, "reading", "logs/big.log", content, filetools.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}

	window, err := client.ReadText(ctx, "reading", "logs/big.log", filetools.ReadOptions{StartLine: 3, LineCount: 4})
	if err != nil {
		t.Fatal(err)
	}
	if window.Text != numberedLines(3, 6) || window.FirstLine != 3 || window.LastLine != 6 || window.NextLine != 7 ||
		window.EOF || window.Truncated || window.Version != written.GetVersion() || window.File.GetPath() != "/logs/big.log" {
		t.Errorf("lines 3-6: got %+v", window)
	}

	// Paging to the end, ten lines at a time.
	var paged strings.Builder
	var pages []int64
	next := int64(1)
	for next != 0 {
		page, err := client.ReadText(ctx, "reading", "/logs/big.log", filetools.ReadOptions{StartLine: next, LineCount: 10})
		if err != nil {
			t.Fatal(err)
		}
		paged.WriteString(page.Text)
		pages = append(pages, page.FirstLine)
		if page.NextLine == 0 && (!page.EOF || page.TotalLines != 25 || page.LastLine != 25) {
			t.Errorf("last page: got %+v, want EOF, 25 lines in all, last line 25", page.Window)
		}
		next = page.NextLine
	}
	if paged.String() != content || !slices.Equal(pages, []int64{1, 11, 21}) {
		t.Errorf("paging: pages starting at %v, text equal to the file: %v", pages, paged.String() == content)
	}

	tail, err := client.ReadText(ctx, "reading", "logs/big.log", filetools.ReadOptions{Tail: 3})
	if err != nil {
		t.Fatal(err)
	}
	if tail.Text != numberedLines(23, 25) || tail.FirstLine != 23 || tail.LastLine != 25 || tail.TotalLines != 25 || !tail.EOF {
		t.Errorf("tail 3: got %+v", tail)
	}

	// A byte cap stops the window at a whole line and says where to go on.
	capped, err := client.ReadText(ctx, "reading", "logs/big.log", filetools.ReadOptions{MaxBytes: 20})
	if err != nil {
		t.Fatal(err)
	}
	if capped.Text != numberedLines(1, 2) || !capped.Truncated || capped.NextLine != 3 || capped.EOF {
		t.Errorf("max 20 bytes: got %+v", capped)
	}
}

func TestWriteEditRoundTripsAndReasons(t *testing.T) {
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "editing"); err != nil {
		t.Fatal(err)
	}
	first, err := client.WriteText(ctx, "editing", "src/main.go", "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n", filetools.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !first.GetCreated() || first.GetPath() != "/src/main.go" {
		t.Errorf("WriteText: got %v", first)
	}

	edited, err := client.Edit(ctx, "editing", "src/main.go", []filetools.TextEdit{{Old: `println("hi")`, New: `println("hello")`}}, filetools.EditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if edited.GetReplacements() != 1 || !strings.Contains(edited.GetDiff(), `+	println("hello")`) || edited.GetVersion() == first.GetVersion() {
		t.Errorf("Edit: got %v", edited)
	}
	after, err := client.ReadText(ctx, "editing", "src/main.go", filetools.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.Text != "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n" || after.Version != edited.GetVersion() {
		t.Errorf("read after Edit: %q, version %q (Edit said %q)", after.Text, after.Version, edited.GetVersion())
	}

	_, err = client.Edit(ctx, "editing", "src/main.go", []filetools.TextEdit{{Old: "goodbye", New: "x"}}, filetools.EditOptions{})
	notFound := expectReason(t, "Edit of missing text", err, codes.FailedPrecondition, filetools.ErrOldTextNotFound)
	if notFound.Metadata["edit_index"] != "0" {
		t.Errorf("OLD_TEXT_NOT_FOUND metadata %v, want edit_index 0", notFound.Metadata)
	}

	_, err = client.Edit(ctx, "editing", "src/main.go", []filetools.TextEdit{{Old: "main", New: "Main"}}, filetools.EditOptions{})
	notUnique := expectReason(t, "Edit of repeated text", err, codes.FailedPrecondition, filetools.ErrOldTextNotUnique)
	if notUnique.Metadata["count"] != "2" {
		t.Errorf("OLD_TEXT_NOT_UNIQUE metadata %v, want count 2", notUnique.Metadata)
	}

	_, err = client.WriteText(ctx, "editing", "src/main.go", "stale\n", filetools.WriteOptions{IfVersion: first.GetVersion()})
	changed := expectReason(t, "WriteText with a stale version", err, codes.FailedPrecondition, filetools.ErrContentChanged)
	if changed.Metadata["current_version"] != edited.GetVersion() {
		t.Errorf("CONTENT_CHANGED metadata %v, want current_version %q", changed.Metadata, edited.GetVersion())
	}

	_, err = client.WriteText(ctx, "editing", "src/main.go", "again\n", filetools.WriteOptions{Mode: filetools.WriteCreateOnly})
	expectReason(t, "WriteText CREATE_ONLY over a file", err, codes.AlreadyExists, filetools.ErrAlreadyExists)

	_, err = client.WriteText(ctx, "editing", "../outside.txt", "x\n", filetools.WriteOptions{})
	expectReason(t, "WriteText ../outside.txt", err, codes.PermissionDenied, filetools.ErrPathEscapesWorkspace)

	_, err = client.ReadText(ctx, "no-such-workspace", "a.txt", filetools.ReadOptions{})
	expectReason(t, "ReadText in an unknown workspace", err, codes.NotFound, filetools.ErrWorkspaceNotFound)

	if _, err := client.WriteBytes(ctx, "editing", "bin/blob", []byte{0x7f, 'E', 'L', 'F', 0, 0, 1, 2}, filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = client.ReadText(ctx, "editing", "bin/blob", filetools.ReadOptions{})
	expectReason(t, "ReadText of a binary file", err, codes.FailedPrecondition, filetools.ErrBinaryFile)
	if errors.Is(err, filetools.ErrNotFound) {
		t.Errorf("errors.Is(BINARY_FILE error, ErrNotFound) is true")
	}
}

func TestFileOperations(t *testing.T) {
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	created, err := client.MakeDir(ctx, "ops", "a/b", filetools.MakeDirOptions{})
	if err != nil || !created {
		t.Fatalf("MakeDir a/b: created %v, %v", created, err)
	}
	for _, name := range []string{"a/b/one.txt", "a/two.txt", "a/.hidden"} {
		if _, err := client.WriteText(ctx, "ops", name, name+"\n", filetools.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	info, err := client.Stat(ctx, "ops", "a/two.txt", filetools.StatOptions{CountLines: true})
	if err != nil || info.GetLineCount() != 1 || info.GetSize() != int64(len("a/two.txt\n")) {
		t.Errorf("Stat a/two.txt: %v, %v", info, err)
	}

	var summary filetools.ListSummary
	var listed []string
	for entry, err := range client.List(ctx, "ops", "a", filetools.ListOptions{Recursive: true, SkipHidden: true, Summary: &summary}) {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, entry.GetPath())
	}
	if want := []string{"/a/b", "/a/b/one.txt", "/a/two.txt"}; !slices.Equal(listed, want) || summary.Total != 3 || summary.Truncated {
		t.Errorf("List a: %v, summary %+v; want %v, total 3", listed, summary, want)
	}

	moved, err := client.Move(ctx, "ops", "a/two.txt", "c/2.txt", filetools.MoveOptions{})
	if err != nil || moved.GetPath() != "/c/2.txt" {
		t.Errorf("Move: %v, %v", moved, err)
	}
	_, err = client.Delete(ctx, "ops", "a", filetools.DeleteOptions{})
	expectReason(t, "Delete of a directory without Recursive", err, codes.FailedPrecondition, filetools.ErrIsADirectory)
	existed, err := client.Delete(ctx, "ops", "a", filetools.DeleteOptions{Recursive: true})
	if err != nil || !existed {
		t.Errorf("Delete a recursively: existed %v, %v", existed, err)
	}
	_, err = client.Stat(ctx, "ops", "a/b/one.txt", filetools.StatOptions{})
	expectReason(t, "Stat after Delete", err, codes.NotFound, filetools.ErrNotFound)
}

func TestUploadDownloadRoundTrip(t *testing.T) {
	daemon := startDaemon(t)
	client := daemon.client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "transfer"); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 3<<20+12345) // several chunks
	_, _ = rand.Read(data)
	sum := sha256.Sum256(data)
	uploaded, err := client.Upload(ctx, "transfer", "blobs/data.bin", bytes.NewReader(data), filetools.UploadOptions{SHA256: hex.EncodeToString(sum[:])})
	if err != nil {
		t.Fatal(err)
	}
	if uploaded.GetSize() != int64(len(data)) || !uploaded.GetCreated() {
		t.Errorf("Upload: got %v", uploaded)
	}
	var downloaded bytes.Buffer
	info, err := client.Download(ctx, "transfer", "blobs/data.bin", &downloaded)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(downloaded.Bytes(), data) || info.GetSha256() != hex.EncodeToString(sum[:]) {
		t.Errorf("Download: %d bytes, sha256 %s; want the %d bytes uploaded", downloaded.Len(), info.GetSha256(), len(data))
	}

	// A reader that fails half way cancels the upload: its error comes back
	// as it is, and the daemon writes nothing.
	readFailure := errors.New("disk went away")
	failing := io.MultiReader(bytes.NewReader(data[:2<<20]), &failingReader{readFailure})
	_, err = client.Upload(ctx, "transfer", "blobs/partial.bin", failing, filetools.UploadOptions{})
	if !errors.Is(err, readFailure) {
		t.Fatalf("Upload from a failing reader: %v, want the reader's error", err)
	}
	logs := daemon.awaitCallLogs(t, "filetools.v1.Files/Upload", "transfer", 2)
	if logs[1].Code != "CANCELLED" {
		t.Errorf("the daemon logged the failed upload as %+v, want CANCELLED", logs[1])
	}
	_, err = client.Stat(ctx, "transfer", "blobs/partial.bin", filetools.StatOptions{})
	expectReason(t, "Stat of the cancelled upload", err, codes.NotFound, filetools.ErrNotFound)
}

type failingReader struct{ err error }

func (r *failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestSearchStreamsMatches(t *testing.T) {
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "code"); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"src/a.go":   "package a\n// TODO: one\nfunc A() {}\n// TODO: two\n",
		"src/b.go":   "package b\nfunc B() {}\n",
		"docs/c.md":  "# TODO list\n",
		"src/d.go":   "package d\n// todo lower case\n",
		"vendor/x.c": "// TODO vendored\n",
	}
	for name, content := range files {
		if _, err := client.WriteText(ctx, "code", name, content, filetools.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	var summary filetools.SearchSummary
	var got []string
	for m, err := range client.Search(ctx, "code", "TODO", filetools.SearchOptions{Include: []string{"*.go"}, ContextBefore: 1, Summary: &summary}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s:%d:%d:%s|%s", m.GetPath(), m.GetLineNumber(), m.GetColumn(), m.GetLine(), strings.Join(m.GetBefore(), ",")))
	}
	want := []string{"/src/a.go:2:4:// TODO: one|package a", "/src/a.go:4:4:// TODO: two|func A() {}"}
	if !slices.Equal(got, want) {
		t.Errorf("Search TODO in *.go:\n got %q\nwant %q", got, want)
	}
	if summary.FilesSearched != 3 || summary.FilesMatched != 1 || summary.Matches != 2 || summary.Truncated || summary.TimedOut {
		t.Errorf("Search summary %+v, want 3 files searched, 1 matched, 2 matches", summary)
	}

	var paths []string
	for path, err := range client.SearchFiles(ctx, "code", "todo", filetools.SearchOptions{CaseInsensitive: true, Exclude: []string{"vendor/**"}}) {
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	if want := []string{"/docs/c.md", "/src/a.go", "/src/d.go"}; !slices.Equal(paths, want) {
		t.Errorf("SearchFiles: %v, want %v", paths, want)
	}
	// OrderFound: the same files, in the order the daemon found them.
	var found []string
	for path, err := range client.SearchFiles(ctx, "code", "todo", filetools.SearchOptions{CaseInsensitive: true, Exclude: []string{"vendor/**"}, Order: filetools.OrderFound}) {
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, path)
	}
	slices.Sort(found)
	if !slices.Equal(found, paths) {
		t.Errorf("SearchFiles with OrderFound: %v, want %v in some order", found, paths)
	}
	for count, err := range client.SearchCounts(ctx, "code", "TODO", filetools.SearchOptions{Path: "src/a.go"}) {
		if err != nil || count.GetPath() != "/src/a.go" || count.GetCount() != 2 {
			t.Errorf("SearchCounts: %v, %v; want /src/a.go 2", count, err)
		}
	}

	for _, err := range client.Search(ctx, "code", "(unclosed", filetools.SearchOptions{}) {
		expectReason(t, "Search with an invalid regex", err, codes.InvalidArgument, filetools.ErrInvalidArgument)
	}
}

// bigSearch writes a file of 10,000 matching lines of 500 characters (5 MB
// of results, far more than the connection's flow-control window) and
// returns the options of a search that finds them all.
func bigSearch(t *testing.T, client *filetools.Client, workspace string) filetools.SearchOptions {
	t.Helper()
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, workspace); err != nil {
		t.Fatal(err)
	}
	line := "match " + strings.Repeat("x", 493) + "\n"
	if _, err := client.WriteText(ctx, workspace, "big.txt", strings.Repeat(line, 10_000), filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return filetools.SearchOptions{FixedStrings: true, MaxResults: 10_000}
}

// The client asks for batches of matches; what it yields is what an older
// client gets as one match per message: the same matches in the same order,
// with their context, up to max_results.
func TestSearchBatchesYieldTheSingleMessagesMatches(t *testing.T) {
	d := startDaemon(t)
	client := d.client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "many"); err != nil {
		t.Fatal(err)
	}
	for i := range 150 {
		content := strings.Repeat(fmt.Sprintf("TODO %d\nplain\n", i), i%4+1)
		if _, err := client.WriteText(ctx, "many", fmt.Sprintf("d%d/f%03d.txt", i%3, i), content, filetools.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	raw := filetoolsv1.NewFilesClient(d.conn(t))
	for _, max := range []int32{10_000, 77} {
		stream, err := raw.Search(ctx, &filetoolsv1.SearchRequest{Workspace: "many", Pattern: "TODO", ContextAfter: 1, MaxResults: &max})
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for {
			msg, err := stream.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if msg.GetSummary() != nil {
				break
			}
			if msg.GetMatch() == nil {
				t.Fatalf("a request without batch_matches got %v, want single matches", msg)
			}
			want = append(want, fmt.Sprintf("%s:%d:%v", msg.GetMatch().GetPath(), msg.GetMatch().GetLineNumber(), msg.GetMatch().GetAfter()))
		}
		var summary filetools.SearchSummary
		var got []string
		for m, err := range client.Search(ctx, "many", "TODO", filetools.SearchOptions{ContextAfter: 1, MaxResults: max, Summary: &summary}) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%s:%d:%v", m.GetPath(), m.GetLineNumber(), m.GetAfter()))
		}
		if !slices.Equal(got, want) || len(got) != min(int(max), 373) {
			t.Errorf("max_results %d: the client yielded %d matches, single messages gave %d (or in another order)", max, len(got), len(want))
		}
		if summary.Truncated != (max == 77) {
			t.Errorf("max_results %d: truncated %v", max, summary.Truncated)
		}
	}
}

func TestSearchEarlyBreakStopsTheDaemon(t *testing.T) {
	daemon := startDaemon(t)
	client := daemon.client(t)
	ctx := testContext(t)
	opts := bigSearch(t, client, "early")

	// Read to the end once: the daemon logs the call as OK.
	var summary filetools.SearchSummary
	opts.Summary = &summary
	all := 0
	for _, err := range client.Search(ctx, "early", "match", opts) {
		if err != nil {
			t.Fatal(err)
		}
		all++
	}
	if all != 10_000 || summary.Matches != 10_000 {
		t.Fatalf("whole search: %d matches, summary %+v; want 10,000", all, summary)
	}

	// Break after the first match: the daemon, blocked on the unread results,
	// sees the cancellation and logs the call as CANCELLED.
	var unread filetools.SearchSummary
	opts.Summary = &unread
	read := 0
	for m, err := range client.Search(ctx, "early", "match", opts) {
		if err != nil {
			t.Fatal(err)
		}
		if m.GetLineNumber() != 1 {
			t.Errorf("first match on line %d, want 1", m.GetLineNumber())
		}
		read++
		break
	}
	logs := daemon.awaitCallLogs(t, "filetools.v1.Files/Search", "early", 2)
	if read != 1 || logs[0].Code != "OK" || logs[1].Code != "CANCELLED" || unread != (filetools.SearchSummary{}) {
		t.Errorf("read %d matches, summary %+v; the daemon logged %+v, want OK then CANCELLED", read, unread, logs)
	}
}

// A search whose context ends while the loop holds the first match fails
// with the context's code, seen alike by the client and the daemon.
func TestSearchDeadlineAndCancellation(t *testing.T) {
	daemon := startDaemon(t)
	client := daemon.client(t)
	for _, tc := range []struct {
		name       string
		deadline   time.Duration // 0: cancel at the first match instead
		code       codes.Code
		contextErr error
		logged     string
	}{
		{"deadline", 2 * time.Second, codes.DeadlineExceeded, context.DeadlineExceeded, "DEADLINE_EXCEEDED"},
		{"cancel", 0, codes.Canceled, context.Canceled, "CANCELLED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := bigSearch(t, client, tc.name)
			ctx, cancel := context.WithCancel(testContext(t))
			if tc.deadline > 0 {
				ctx, cancel = context.WithTimeout(testContext(t), tc.deadline)
			}
			defer cancel()
			var failure error
			for _, err := range client.Search(ctx, tc.name, "match", opts) {
				if err != nil {
					failure = err
					break
				}
				if tc.deadline == 0 {
					cancel()
				}
				<-ctx.Done()
			}
			canceled, expired := errors.Is(failure, context.Canceled), errors.Is(failure, context.DeadlineExceeded)
			if asError(t, failure).Code != tc.code || !errors.Is(failure, tc.contextErr) || canceled == expired {
				t.Errorf("Search: %v, want %v matching %v alone", failure, tc.code, tc.contextErr)
			}
			if logs := daemon.awaitCallLogs(t, "filetools.v1.Files/Search", tc.name, 1); logs[0].Code != tc.logged {
				t.Errorf("the daemon logged %+v, want %s", logs[0], tc.logged)
			}
			// A call with the ended context fails at once, with the same code.
			if _, err := client.Stat(ctx, tc.name, "big.txt", filetools.StatOptions{}); asError(t, err).Code != tc.code {
				t.Errorf("Stat with the ended context: %v, want %v", err, tc.code)
			}
		})
	}
}

// tarMembers lists the regular files of a .tar.gz file, and their contents.
func tarMembers(t *testing.T, path string) map[string]string {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	gz, err := gzip.NewReader(file)
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	members := map[string]string{}
	archive := tar.NewReader(gz)
	for {
		header, err := archive.Next()
		if errors.Is(err, io.EOF) {
			return members
		}
		if err != nil {
			t.Fatalf("not a tar: %v", err)
		}
		if header.Typeflag == tar.TypeReg {
			content, err := io.ReadAll(archive)
			if err != nil {
				t.Fatal(err)
			}
			members[header.Name] = string(content)
		}
	}
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func TestRunAndExportSnapshotToFile(t *testing.T) {
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	run, err := client.StartRun(ctx, "crew", filetools.StartRunOptions{Labels: map[string]string{"agent": "go-test"}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.StartRun(ctx, "crew", filetools.StartRunOptions{})
	expectReason(t, "a second StartRun", err, codes.FailedPrecondition, filetools.ErrRunActive)

	artifacts := map[string]string{"out/report.md": "# Report\nall good\n", "out/data.csv": "a,b\n1,2\n"}
	for name, content := range artifacts {
		if _, err := client.WriteText(ctx, "crew", name, content, filetools.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.WriteText(ctx, "crew", "scratch.txt", "notes\n", filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var changed []string
	for change, err := range client.Changes(ctx, "crew", run.GetId()) {
		if err != nil {
			t.Fatal(err)
		}
		changed = append(changed, change.GetKind().String()+" "+change.GetPath())
	}
	slices.Sort(changed)
	if want := []string{"CHANGE_KIND_CREATE /out/data.csv", "CHANGE_KIND_CREATE /out/report.md", "CHANGE_KIND_CREATE /scratch.txt"}; !slices.Equal(changed, want) {
		t.Errorf("Changes: %v, want %v", changed, want)
	}
	finished, err := client.FinishRun(ctx, "crew", run.GetId(), filetools.FinishRunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snapshot := finished.GetSnapshot()
	if snapshot.GetFileCount() != 3 || finished.GetChanges().GetCreated() != 3 || snapshot.GetLabels()["agent"] != "go-test" {
		t.Errorf("FinishRun: %v", finished)
	}
	listed, err := client.ListSnapshots(ctx, "crew")
	if err != nil || len(listed) != 1 || listed[0].GetId() != snapshot.GetId() {
		t.Errorf("ListSnapshots: %v, %v; want the one snapshot %s", listed, err, snapshot.GetId())
	}

	// The whole snapshot: the file on disk is the tarball the manifest describes.
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.tar.gz")
	var progress []int64
	info, err := client.ExportSnapshotToFile(ctx, "crew", whole, filetools.ExportOptions{
		SnapshotID: snapshot.GetId(),
		Progress:   func(done, total int64) { progress = append(progress, done, total) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := sha256File(t, whole); got != snapshot.GetSha256() || info.GetSha256() != got || info.GetSize() != snapshot.GetSizeBytes() {
		t.Errorf("export: file sha256 %s, header %v; manifest sha256 %s, size %d", got, info, snapshot.GetSha256(), snapshot.GetSizeBytes())
	}
	if len(progress) < 2 || progress[len(progress)-2] != info.GetSize() || progress[len(progress)-1] != info.GetSize() {
		t.Errorf("progress %v does not end at %d of %d", progress, info.GetSize(), info.GetSize())
	}
	if members := tarMembers(t, whole); len(members) != 3 || members["out/report.md"] != artifacts["out/report.md"] || members["scratch.txt"] != "notes\n" {
		t.Errorf("whole tarball members: %v", members)
	}

	// Only the artifacts, filtered from the stored snapshot.
	only := filepath.Join(dir, "artifacts.tar.gz")
	info, err = client.ExportSnapshotToFile(ctx, "crew", only, filetools.ExportOptions{Include: []string{"out/**"}})
	if err != nil {
		t.Fatal(err)
	}
	if members := tarMembers(t, only); len(members) != 2 || members["out/report.md"] != artifacts["out/report.md"] ||
		members["out/data.csv"] != artifacts["out/data.csv"] || info.GetFileCount() != 2 || sha256File(t, only) != info.GetSha256() {
		t.Errorf("artifacts tarball: members %v, header %v", members, info)
	}

	// A live export has what was written since; restoring the snapshot drops it.
	if _, err := client.WriteText(ctx, "crew", "out/late.md", "late\n", filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	live := filepath.Join(dir, "live.tar.gz")
	if _, err := client.ExportSnapshotToFile(ctx, "crew", live, filetools.ExportOptions{Live: true, Include: []string{"out/late.md"}}); err != nil {
		t.Fatal(err)
	}
	if members := tarMembers(t, live); len(members) != 1 || members["out/late.md"] != "late\n" {
		t.Errorf("live export of out/late.md: %v", members)
	}
	// The diff to the live workspace: the one file written since.
	var summary filetools.DiffSummary
	var diffed []string
	for entry, err := range client.DiffSnapshots(ctx, "crew", snapshot.GetId(), filetools.DiffOptions{Summary: &summary}) {
		if err != nil {
			t.Fatal(err)
		}
		diffed = append(diffed, entry.GetKind().String()+" "+entry.GetPath())
	}
	if want := []string{"DIFF_KIND_ADDED /out/late.md"}; !slices.Equal(diffed, want) || summary != (filetools.DiffSummary{From: snapshot.GetId(), Added: 1, Unchanged: 3}) {
		t.Errorf("DiffSnapshots: %v, %+v; want %v and 3 unchanged", diffed, summary, want)
	}
	restored, err := client.RestoreSnapshot(ctx, "crew", "")
	if err != nil || restored.GetId() != snapshot.GetId() {
		t.Fatalf("RestoreSnapshot: %v, %v; want %s", restored, err, snapshot.GetId())
	}
	_, err = client.Stat(ctx, "crew", "out/late.md", filetools.StatOptions{})
	expectReason(t, "Stat of a file the restore removed", err, codes.NotFound, filetools.ErrNotFound)

	// A failed export leaves nothing behind: no file, no temporary file.
	failed := filepath.Join(dir, "failed.tar.gz")
	_, err = client.ExportSnapshotToFile(ctx, "no-such-workspace", failed, filetools.ExportOptions{Live: true})
	expectReason(t, "export of an unknown workspace", err, codes.NotFound, filetools.ErrWorkspaceNotFound)
	if entries, _ := os.ReadDir(dir); len(entries) != 3 {
		t.Errorf("after a failed export the directory holds %d entries, want the 3 exports", len(entries))
	}
}

func TestImportArchive(t *testing.T) {
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "imports"); err != nil {
		t.Fatal(err)
	}
	archive := func(name, content string) *bytes.Buffer {
		var buf bytes.Buffer
		gz := gzip.NewWriter(&buf)
		tw := tar.NewWriter(gz)
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write([]byte(content))
		_ = tw.Close()
		_ = gz.Close()
		return &buf
	}
	imported, err := client.ImportArchive(ctx, "imports", "vendor", archive("lib/util.txt", "imported\n"))
	if err != nil {
		t.Fatal(err)
	}
	if imported.GetFileCount() != 1 || imported.GetSizeBytes() != int64(len("imported\n")) {
		t.Errorf("ImportArchive: %v", imported)
	}
	window, err := client.ReadText(ctx, "imports", "vendor/lib/util.txt", filetools.ReadOptions{})
	if err != nil || window.Text != "imported\n" {
		t.Errorf("read the imported file: %v, %v", window, err)
	}
	_, err = client.ImportArchive(ctx, "imports", "", archive("../escape.txt", "x\n"))
	expectReason(t, "ImportArchive of ../escape.txt", err, codes.FailedPrecondition, filetools.ErrUnsafeArchive)
}

func TestExportIntoAndImportFromStreamInsideTheWorkspace(t *testing.T) {
	d := startDaemon(t)
	client := d.client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "pipes"); err != nil {
		t.Fatal(err)
	}
	blob := make([]byte, 3<<20) // random: the archive does not shrink, three chunks or more
	_, _ = rand.Read(blob)
	if _, err := client.Upload(ctx, "pipes", "data/blob.bin", bytes.NewReader(blob), filetools.UploadOptions{}); err != nil {
		t.Fatal(err)
	}
	increasing := func(what string, progress [][2]int64, total int64) {
		t.Helper()
		for i := 1; i < len(progress); i++ {
			if progress[i][0] <= progress[i-1][0] {
				t.Errorf("%s: progress %v does not increase", what, progress)
			}
		}
		if len(progress) < 3 || progress[len(progress)-1] != [2]int64{total, total} {
			t.Errorf("%s: progress %v, want at least 3 ending at %d of %d", what, progress, total, total)
		}
	}

	var exported [][2]int64
	header, file, err := client.ExportInto(ctx, "pipes", "out/data.tar.gz",
		filetools.ExportOptions{Live: true, Include: []string{"data/**"}, Progress: func(done, total int64) { exported = append(exported, [2]int64{done, total}) }},
		filetools.UploadOptions{Mode: filetools.WriteCreateOnly})
	if err != nil {
		t.Fatal(err)
	}
	if file.GetPath() != "/out/data.tar.gz" || file.GetSize() != header.GetSize() || file.GetSha256() != header.GetSha256() || header.GetFileCount() != 1 {
		t.Errorf("ExportInto: %v, %v", header, file)
	}
	increasing("ExportInto", exported, header.GetSize())
	_, _, err = client.ExportInto(ctx, "pipes", "out/data.tar.gz", filetools.ExportOptions{Live: true}, filetools.UploadOptions{Mode: filetools.WriteCreateOnly})
	expectReason(t, "ExportInto an existing file", err, codes.AlreadyExists, filetools.ErrAlreadyExists)

	var imported [][2]int64
	archive, unpacked, err := client.ImportFrom(ctx, "pipes", "out/data.tar.gz", "copy", func(done, total int64) { imported = append(imported, [2]int64{done, total}) })
	if err != nil {
		t.Fatal(err)
	}
	if archive.GetFile().GetPath() != "/out/data.tar.gz" || unpacked.GetFileCount() != 1 || unpacked.GetSizeBytes() != 3<<20 {
		t.Errorf("ImportFrom: %v, %v", archive, unpacked)
	}
	increasing("ImportFrom", imported, header.GetSize())
	_, _, err = client.ImportFrom(ctx, "pipes", "data/blob.bin", "bad", nil)
	expectReason(t, "ImportFrom a file that is no archive", err, codes.FailedPrecondition, filetools.ErrUnsafeArchive)
	_, _, err = client.ImportFrom(ctx, "pipes", "none.tar.gz", "", nil)
	expectReason(t, "ImportFrom a missing archive", err, codes.NotFound, filetools.ErrNotFound)

	// Cancelled once bytes move: neither the archive nor a temp file of its upload is left on the daemon's disk.
	cancelled, cancel := context.WithCancel(ctx)
	_, _, err = client.ExportInto(cancelled, "pipes", "out/cancelled.tar.gz", filetools.ExportOptions{Live: true, Progress: func(int64, int64) { cancel() }}, filetools.UploadOptions{})
	var e *filetools.Error
	if !errors.As(err, &e) || e.Code != codes.Canceled {
		t.Errorf("a cancelled ExportInto: %v, want CANCELLED", err)
	}
	uploadCancelled := regexp.MustCompile(`"method":"filetools\.v1\.Files/Upload"[^\n]*"code":"CANCELLED"`)
	for i := 0; i < 250 && !uploadCancelled.MatchString(d.stderr.String()); i++ {
		time.Sleep(20 * time.Millisecond) // until the daemon has ended the upload (and removed its temp file)
	}
	names, err := os.ReadDir(filepath.Join(d.dataDir, "workspaces", "pipes", "out"))
	if err != nil || len(names) != 1 || names[0].Name() != "data.tar.gz" {
		t.Errorf("after a cancelled export, out/ holds %v (%v), want data.tar.gz alone", names, err)
	}
}

func TestWorkspaces(t *testing.T) {
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	for _, id := range []string{"beta", "alpha"} {
		if _, err := client.CreateWorkspace(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	_, err := client.CreateWorkspace(ctx, "alpha")
	expectReason(t, "CreateWorkspace twice", err, codes.AlreadyExists, filetools.ErrAlreadyExists)
	_, err = client.CreateWorkspace(ctx, "Not Valid")
	expectReason(t, "CreateWorkspace with a bad id", err, codes.InvalidArgument, filetools.ErrInvalidArgument)
	workspaces, err := client.ListWorkspaces(ctx)
	if err != nil || len(workspaces) != 2 || workspaces[0].GetId() != "alpha" || workspaces[1].GetId() != "beta" {
		t.Errorf("ListWorkspaces: %v, %v", workspaces, err)
	}
	if err := client.DeleteWorkspace(ctx, "beta", filetools.DeleteWorkspaceOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = client.GetWorkspace(ctx, "beta")
	expectReason(t, "GetWorkspace after delete", err, codes.NotFound, filetools.ErrWorkspaceNotFound)
}

func TestAbandonedRunIsSeenListedEndedAndItsWorkKeptAsARecoveredSnapshot(t *testing.T) {
	client := startDaemon(t, "--node-name", "go-node").client(t)
	ctx := testContext(t)
	write := func(name, content string) {
		t.Helper()
		if _, err := client.WriteText(ctx, "ops", name, content, filetools.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	first, err := client.StartRun(ctx, "ops", filetools.StartRunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write("notes.md", "one\n")
	finished, err := client.FinishRun(ctx, "ops", first.GetId(), filetools.FinishRunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	published := finished.GetSnapshot()
	status, err := client.WorkspaceStatus(ctx, "ops")
	if err != nil || status.GetWorkspace().GetId() != "ops" || status.GetActiveRun() != nil ||
		status.GetNewestSnapshot() != published.GetId() || status.GetCopyOf() != published.GetId() || status.GetUnpublishedChanges() {
		t.Errorf("WorkspaceStatus after a published run: %v, %v; want no active run, newest and copy of %s, no changes", status, err, published.GetId())
	}

	run, err := client.StartRun(ctx, "ops", filetools.StartRunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if run.GetNode() != "go-node" || run.GetStartedFrom() != published.GetId() {
		t.Errorf("StartRun: node %q, started from %q; want go-node, %s", run.GetNode(), run.GetStartedFrom(), published.GetId())
	}
	write("draft.md", "unpublished\n")
	status, err = client.WorkspaceStatus(ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	active := status.GetActiveRun()
	if active.GetWorkspace() != "ops" || active.GetRunId() != run.GetId() || active.GetNode() != "go-node" || !active.GetLocal() ||
		!active.GetStartedAt().AsTime().Equal(run.GetStartedAt().AsTime()) {
		t.Errorf("WorkspaceStatus active run: %v; want %s, local, on go-node", active, run.GetId())
	}
	if !status.GetUnpublishedChanges() || status.GetCopyOf() != published.GetId() {
		t.Errorf("WorkspaceStatus during the run: %v; want unpublished changes on a copy of %s", status, published.GetId())
	}
	runs, err := client.ListRuns(ctx)
	if err != nil || len(runs) != 1 || runs[0].GetRunId() != run.GetId() || runs[0].GetWorkspace() != "ops" || runs[0].GetNode() != "go-node" || !runs[0].GetLocal() {
		t.Errorf("ListRuns: %v, %v; want the one local run %s", runs, err, run.GetId())
	}

	abandoned, err := client.AbandonRun(ctx, "ops", filetools.AbandonRunOptions{Reason: "stuck for an hour"})
	if err != nil {
		t.Fatal(err)
	}
	recovered := abandoned.GetRecovered()
	if abandoned.GetRunId() != run.GetId() || abandoned.GetLeaseBroken() || !recovered.GetRecovered() || recovered.GetRunId() != run.GetId() ||
		recovered.GetParent() != published.GetId() || recovered.GetFileCount() != 2 || !strings.Contains(recovered.GetRecoveredReason(), "stuck for an hour") {
		t.Errorf("AbandonRun: %v; want run %s ended here, its two files kept as a recovered snapshot of %s", abandoned, run.GetId(), published.GetId())
	}
	if status, err := client.WorkspaceStatus(ctx, "ops"); err != nil || status.GetActiveRun() != nil {
		t.Errorf("WorkspaceStatus after AbandonRun: %v, %v; want no active run", status, err)
	}
	if runs, err := client.ListRuns(ctx); err != nil || len(runs) != 0 {
		t.Errorf("ListRuns after AbandonRun: %v, %v; want none", runs, err)
	}
	_, err = client.AbandonRun(ctx, "ops", filetools.AbandonRunOptions{})
	expectReason(t, "AbandonRun with no active run", err, codes.NotFound, filetools.ErrNotFound)

	mainLine, err := client.ListSnapshots(ctx, "ops")
	if err != nil || len(mainLine) != 1 || mainLine[0].GetId() != published.GetId() {
		t.Errorf("ListSnapshots: %v, %v; want only %s", mainLine, err, published.GetId())
	}
	all, err := client.ListSnapshots(ctx, "ops", filetools.ListSnapshotsOptions{IncludeRecovered: true})
	// The main line first, then what was kept off it.
	if err != nil || len(all) != 2 ||
		all[0].GetId() != published.GetId() || all[0].GetRecovered() ||
		all[1].GetId() != recovered.GetId() || !all[1].GetRecovered() || all[1].GetRunId() != run.GetId() {
		t.Errorf("ListSnapshots with IncludeRecovered: %v, %v; want %s, then %s (recovered)", all, err, published.GetId(), recovered.GetId())
	}
}

func TestDialFailures(t *testing.T) {
	ctx := testContext(t)
	// A port nobody listens on: the first connection attempt fails at once.
	_, err := filetools.Dial(ctx, "127.0.0.1:1")
	if fe := asError(t, err); fe.Code != codes.Unavailable || !strings.Contains(fe.Message, "connection refused") {
		t.Errorf("Dial of a closed port: %v, want Unavailable saying the connection was refused", err)
	}
	// A token is never sent in clear to another machine.
	if _, err := filetools.Dial(ctx, "192.0.2.1:7447", filetools.WithToken("s3cret")); err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Errorf("Dial with a token to a non-loopback address without TLS: %v, want a refusal", err)
	}
}

func TestDialOptionsReachGRPC(t *testing.T) {
	daemon := startDaemon(t)
	var methods []string
	record := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		methods = append(methods, method)
		return invoke(ctx, method, req, reply, cc, opts...)
	}
	client := daemon.client(t, filetools.WithDialOptions(grpc.WithChainUnaryInterceptor(record)))
	if _, err := client.CreateWorkspace(testContext(t), "intercepted"); err != nil {
		t.Fatal(err)
	}
	// Dial's health check, then the call.
	if want := []string{"/grpc.health.v1.Health/Check", "/filetools.v1.Workspaces/CreateWorkspace"}; !slices.Equal(methods, want) {
		t.Errorf("the interceptor saw %v, want %v", methods, want)
	}
}

func TestQuotaExceededCarriesUsageAndLimit(t *testing.T) {
	client := startDaemon(t, "--quota-bytes", "1KiB").client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "quota"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.WriteText(ctx, "quota", "a.txt", strings.Repeat("a", 1000), filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := client.WriteText(ctx, "quota", "b.txt", strings.Repeat("b", 100), filetools.WriteOptions{})
	fe := expectReason(t, "WriteText past the quota", err, codes.ResourceExhausted, filetools.ErrQuotaExceeded)
	want := map[string]string{"usage_bytes": "1000", "limit_bytes": "1024", "added_bytes": "100", "added_files": "1"}
	for key, value := range want {
		if fe.Metadata[key] != value {
			t.Errorf("metadata %s = %q, want %q (%v)", key, fe.Metadata[key], value, fe.Metadata)
		}
	}
	// Shrinking is always allowed, over the limit or not.
	if _, err := client.WriteText(ctx, "quota", "a.txt", "a", filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
}

package filetools_test

// The shared Multiplex.Calls stream (multiplex.go): every other test makes its
// unary calls and ReadText there; these check what is particular to it.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	filetools "github.com/filetools/filetools/clients/go"
	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
)

func TestSharedStreamAnswersAsStreamsOfTheirOwn(t *testing.T) {
	d := startDaemon(t, "--log-level", "info")
	shared, own := d.client(t), d.client(t, filetools.WithoutSharedStream())
	ctx := testContext(t)
	if _, err := shared.CreateWorkspace(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	if _, err := shared.WriteText(ctx, "m", "small.txt", "one\ntwo\nthree\n", filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	calls := func(client *filetools.Client) []string {
		results := make([]string, 96)
		var wg sync.WaitGroup
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				switch i % 3 {
				case 0:
					window, err := client.ReadText(ctx, "m", "small.txt", filetools.ReadOptions{StartLine: 2})
					results[i] = fmt.Sprint(window.Text, window.FirstLine, window.LastLine, window.TotalLines, err)
				case 1:
					info, err := client.Stat(ctx, "m", "small.txt", filetools.StatOptions{})
					results[i] = fmt.Sprint(info.GetSize(), err)
				default:
					_, err := client.Edit(ctx, "m", "small.txt", []filetools.TextEdit{{Old: "absent", New: "x"}}, filetools.EditOptions{})
					var e *filetools.Error
					if errors.As(err, &e) {
						results[i] = fmt.Sprint(e.Code, e.Reason, e.Metadata)
					}
				}
			}()
		}
		wg.Wait()
		return results
	}
	got, want := calls(shared), calls(own)
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("call %d: shared %q, own stream %q", i, got[i], want[i])
		}
	}
	// ReadText reads on to the call's status: the daemon logs every Read OK, none cancelled.
	for _, entry := range d.awaitCallLogs(t, "filetools.v1.Files/Read", "m", 64) {
		if entry.Code != "OK" {
			t.Errorf("a Read logged %s %s", entry.Code, entry.Reason)
		}
	}
}

func TestSharedStreamCancelAndDeadline(t *testing.T) {
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.WriteText(ctx, "m", "small.txt", "small\n", filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("a line of the big file\n", 2_500)
	for i := range 40 {
		if _, err := client.WriteText(ctx, "m", "big.txt", big, filetools.WriteOptions{Mode: filetools.WriteAppend}); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}

	cancelled, cancel := context.WithCancel(ctx)
	go func() {
		time.Sleep(time.Millisecond)
		cancel()
	}()
	_, err := client.ReadText(cancelled, "m", "big.txt", filetools.ReadOptions{})
	expectCode(t, "a cancelled ReadText", err, codes.Canceled)

	late, cancelLate := context.WithTimeout(ctx, time.Millisecond)
	defer cancelLate()
	_, err = client.ReadText(late, "m", "big.txt", filetools.ReadOptions{})
	expectCode(t, "a ReadText past its deadline", err, codes.DeadlineExceeded)

	gone, cancelGone := context.WithCancel(ctx)
	cancelGone()
	_, err = client.Stat(gone, "m", "small.txt", filetools.StatOptions{})
	expectCode(t, "a Stat with a cancelled context", err, codes.Canceled)

	// A deadline farther than the wire's uint32 milliseconds (49 days) is as good as none.
	far, cancelFar := context.WithTimeout(ctx, 100*24*time.Hour)
	defer cancelFar()
	if window, err := client.ReadText(far, "m", "small.txt", filetools.ReadOptions{}); err != nil || window.Text != "small\n" {
		t.Fatalf("ReadText with a far deadline: %v, %v", window, err)
	}
}

func TestSharedStreamCallsGivenUpKeepTheirPlaceUntilAnswered(t *testing.T) {
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.WriteText(ctx, "m", "big.txt", strings.Repeat("a line of the big file\n", 2_500), filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		var reads sync.WaitGroup
		cancels := make([]context.CancelFunc, 64)
		for i := range cancels {
			readCtx, cancel := context.WithCancel(ctx)
			cancels[i] = cancel
			reads.Add(1)
			go func() {
				defer reads.Done()
				_, _ = client.ReadText(readCtx, "m", "big.txt", filetools.ReadOptions{})
			}()
		}
		time.Sleep(2 * time.Millisecond)
		for _, cancel := range cancels {
			cancel()
		}
		var stats sync.WaitGroup
		for range 64 {
			stats.Add(1)
			go func() {
				defer stats.Done()
				if _, err := client.Stat(ctx, "m", "big.txt", filetools.StatOptions{}); err != nil {
					t.Errorf("round %d: Stat after 64 cancelled reads: %v", round, err)
				}
			}()
		}
		stats.Wait()
		reads.Wait()
	}
}

func expectCode(t *testing.T, what string, err error, code codes.Code) {
	t.Helper()
	var e *filetools.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("%s: got %v, want %s", what, err, code)
	}
}

// statOnly is a daemon without Multiplex: health and Files.Stat, as an older daemon would answer.
type statOnly struct {
	filetoolsv1.UnimplementedFilesServer
}

func (statOnly) Stat(_ context.Context, request *filetoolsv1.StatRequest) (*filetoolsv1.StatResponse, error) {
	return &filetoolsv1.StatResponse{File: &filetoolsv1.FileInfo{Path: request.GetPath(), Size: 42}}, nil
}

func TestSharedStreamFallsBackOnADaemonWithoutIt(t *testing.T) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := grpc.NewServer()
	filetoolsv1.RegisterFilesServer(server, statOnly{})
	healthpb.RegisterHealthServer(server, health.NewServer())
	go func() { _ = server.Serve(listener) }()
	defer server.Stop()

	client, err := filetools.Dial(testContext(t), listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx := testContext(t)
	var wg sync.WaitGroup
	for _, path := range []string{"a", "b", "c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			info, err := client.Stat(ctx, "old", path, filetools.StatOptions{})
			if err != nil || info.GetSize() != 42 || info.GetPath() != path {
				t.Errorf("Stat %s: %v, %v", path, info, err)
			}
		}()
	}
	wg.Wait()
	if info, err := client.Stat(ctx, "old", "d", filetools.StatOptions{}); err != nil || info.GetSize() != 42 {
		t.Fatalf("Stat after the fallback: %v, %v", info, err)
	}
}

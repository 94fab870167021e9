package filetools_test

// Smoke tests of the generated Go code against a real filetoolsd process.
//
// The daemon is started as `node <repo>/dist/server/main.js --listen
// 127.0.0.1:0 --data-dir <temp dir>` (build it first with `npm run build`).
// Set FILETOOLSD to another command (split on spaces) to run something else in
// place of `node <repo>/dist/server/main.js`; the flags are appended to it.

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
)

var listeningRE = regexp.MustCompile(`listening on (\S+):(\d+)`)

// startDaemon starts filetoolsd on a free loopback port with a fresh data
// directory, and stops it with SIGTERM when the test ends. It returns a
// connection to it and the daemon's data directory.
func startDaemon(t *testing.T) (*grpc.ClientConn, string) {
	t.Helper()
	command := strings.Fields(os.Getenv("FILETOOLSD"))
	if len(command) == 0 {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			t.Fatal(err)
		}
		mainJS := filepath.Join(root, "dist", "server", "main.js")
		if _, err := os.Stat(mainJS); err != nil {
			t.Fatalf("%s is missing: run `npm run build` first (or set FILETOOLSD)", mainJS)
		}
		command = []string{"node", mainJS}
	}
	dataDir := t.TempDir()
	args := append(command[1:], "--listen", "127.0.0.1:0", "--data-dir", dataDir)
	cmd := exec.Command(command[0], args...)
	var stderr strings.Builder
	var stderrMu sync.Mutex
	cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		stderrMu.Lock()
		defer stderrMu.Unlock()
		return stderr.Write(p)
	})
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", command, err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			stderrMu.Lock()
			defer stderrMu.Unlock()
			t.Errorf("filetoolsd did not exit within 10 s of SIGTERM; stderr:\n%s", stderr.String())
		}
	})

	address := make(chan string, 1)
	go func() {
		scanner := bufio.NewScanner(stdout)
		found := false
		for scanner.Scan() {
			if m := listeningRE.FindStringSubmatch(scanner.Text()); m != nil && !found {
				found = true
				address <- m[1] + ":" + m[2]
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()

	var target string
	select {
	case target = <-address:
	case err := <-exited:
		exited <- err
		stderrMu.Lock()
		defer stderrMu.Unlock()
		t.Fatalf("filetoolsd exited before listening (%v); stderr:\n%s", err, stderr.String())
	case <-time.After(30 * time.Second):
		stderrMu.Lock()
		defer stderrMu.Unlock()
		t.Fatalf("filetoolsd printed no `listening on HOST:PORT` line within 30 s; stderr:\n%s", stderr.String())
	}

	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn, dataDir
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestSmokeWriteStatReadWindow(t *testing.T) {
	conn, _ := startDaemon(t)
	ctx := testContext(t)
	workspaces := filetoolsv1.NewWorkspacesClient(conn)
	files := filetoolsv1.NewFilesClient(conn)

	created, err := workspaces.CreateWorkspace(ctx, &filetoolsv1.CreateWorkspaceRequest{Workspace: "smoke-go"})
	if err != nil {
		t.Fatalf("CreateWorkspace: %v", err)
	}
	if got := created.GetWorkspace().GetId(); got != "smoke-go" {
		t.Errorf("CreateWorkspace: id = %q, want %q", got, "smoke-go")
	}

	content := "one\ntwo\nthree\nfour\n"
	sum := sha256.Sum256([]byte(content))
	written, err := files.Write(ctx, &filetoolsv1.WriteRequest{
		Workspace: "smoke-go",
		Path:      "notes/hello.txt",
		Body:      &filetoolsv1.WriteRequest_Content{Content: content},
	})
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	if written.GetPath() != "/notes/hello.txt" || written.GetSize() != int64(len(content)) ||
		!written.GetCreated() || written.GetSha256() != hex.EncodeToString(sum[:]) || written.GetVersion() == "" {
		t.Errorf("Write: got %v", written)
	}

	stat, err := files.Stat(ctx, &filetoolsv1.StatRequest{Workspace: "smoke-go", Path: "/notes/hello.txt", CountLines: true})
	if err != nil {
		t.Fatalf("Stat: %v", err)
	}
	info := stat.GetFile()
	if info.GetPath() != "/notes/hello.txt" || info.GetName() != "hello.txt" ||
		info.GetType() != filetoolsv1.FileType_FILE_TYPE_FILE || info.GetSize() != int64(len(content)) {
		t.Errorf("Stat: got %v", info)
	}
	if info.LineCount == nil || info.GetLineCount() != 4 {
		t.Errorf("Stat: line_count = %v, want 4", info.LineCount)
	}
	if info.GetVersion() != written.GetVersion() {
		t.Errorf("Stat: version %q differs from the version Write returned, %q", info.GetVersion(), written.GetVersion())
	}

	stream, err := files.Read(ctx, &filetoolsv1.ReadRequest{
		Workspace: "smoke-go",
		Path:      "/notes/hello.txt",
		StartLine: proto.Int64(2),
		LineCount: proto.Int64(2),
	})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	var (
		header   *filetoolsv1.ReadHeader
		trailer  *filetoolsv1.ReadTrailer
		text     strings.Builder
		firstLns []int64
	)
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if trailer != nil {
			t.Fatalf("Read: a message after the trailer: %v", msg)
		}
		switch ev := msg.GetEvent().(type) {
		case *filetoolsv1.ReadResponse_Header:
			if header != nil || text.Len() > 0 {
				t.Fatalf("Read: the header is not the first message")
			}
			header = ev.Header
		case *filetoolsv1.ReadResponse_Chunk:
			if header == nil {
				t.Fatalf("Read: a chunk before the header")
			}
			firstLns = append(firstLns, ev.Chunk.GetFirstLine())
			text.WriteString(ev.Chunk.GetText())
		case *filetoolsv1.ReadResponse_Trailer:
			trailer = ev.Trailer
		default:
			t.Fatalf("Read: unexpected message %v", msg)
		}
	}
	if header == nil || trailer == nil {
		t.Fatalf("Read: header %v, trailer %v: want both", header, trailer)
	}
	if header.GetFile().GetPath() != "/notes/hello.txt" || header.GetEncoding() != "utf-8" {
		t.Errorf("Read: header %v", header)
	}
	if text.String() != "two\nthree\n" {
		t.Errorf("Read: text %q, want %q", text.String(), "two\nthree\n")
	}
	if len(firstLns) == 0 || firstLns[0] != 2 {
		t.Errorf("Read: chunk first_line values %v, want the first to be 2", firstLns)
	}
	if trailer.GetLinesReturned() != 2 || trailer.GetBytesReturned() != int64(len("two\nthree\n")) ||
		trailer.GetNextLine() != 4 || trailer.GetEof() || trailer.GetTruncated() {
		t.Errorf("Read: trailer %v, want lines_returned 2, bytes_returned 10, next_line 4, eof false, truncated false", trailer)
	}
}

func TestSmokePathEscapeIsPermissionDenied(t *testing.T) {
	conn, dataDir := startDaemon(t)
	ctx := testContext(t)
	workspaces := filetoolsv1.NewWorkspacesClient(conn)
	files := filetoolsv1.NewFilesClient(conn)

	if _, err := workspaces.CreateWorkspace(ctx, &filetoolsv1.CreateWorkspaceRequest{Workspace: "smoke-go"}); err != nil {
		t.Fatalf("CreateWorkspace: %v", err)
	}
	_, err := files.Write(ctx, &filetoolsv1.WriteRequest{
		Workspace: "smoke-go",
		Path:      "../x",
		Body:      &filetoolsv1.WriteRequest_Content{Content: "escape\n"},
	})
	if err == nil {
		t.Fatal("Write ../x: no error, want PERMISSION_DENIED")
	}
	st, ok := status.FromError(err)
	if !ok {
		t.Fatalf("Write ../x: %v is not a gRPC status", err)
	}
	if st.Code() != codes.PermissionDenied {
		t.Errorf("Write ../x: code %v, want PermissionDenied (%v)", st.Code(), err)
	}
	var info *errdetails.ErrorInfo
	for _, d := range st.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok {
			info = ei
		}
	}
	if info == nil {
		t.Fatalf("Write ../x: no google.rpc.ErrorInfo in the status details %v", st.Details())
	}
	if info.GetReason() != "PATH_ESCAPES_WORKSPACE" || info.GetDomain() != "filetools" {
		t.Errorf("Write ../x: ErrorInfo reason %q domain %q, want PATH_ESCAPES_WORKSPACE / filetools", info.GetReason(), info.GetDomain())
	}
	if strings.Contains(st.Message(), dataDir) {
		t.Errorf("Write ../x: the message names a host path: %q", st.Message())
	}
}

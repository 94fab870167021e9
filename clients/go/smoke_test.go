package filetools_test

// Smoke tests of the generated Go code against a real filetoolsd process
// (see daemon_test.go).

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
)

func TestSmokeWriteStatReadWindow(t *testing.T) {
	conn := startDaemon(t).conn(t)
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
	daemon := startDaemon(t)
	conn, dataDir := daemon.conn(t), daemon.dataDir
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

package filetools_test

// The tests' filetoolsd: a real daemon process on a free loopback port.
//
// It is started as `node <repo>/dist/server/main.js --listen 127.0.0.1:0
// --data-dir <temp dir>` (build it first with `npm run build`). Set
// FILETOOLSD to another command (split on spaces) to run something else in
// place of `node <repo>/dist/server/main.js`; the flags are appended to it.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
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

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	filetools "github.com/filetools/filetools/clients/go"
)

var listeningRE = regexp.MustCompile(`listening on (\S+):(\d+)`)

type testDaemon struct {
	address string
	dataDir string
	stderr  *lockedBuffer
	// stop sends SIGTERM and waits for the exit (once; the test's cleanup calls it too).
	stop func()
}

// startDaemon starts filetoolsd with a fresh data directory (and any extra
// flags), and stops it with SIGTERM when the test ends.
func startDaemon(t *testing.T, extraArgs ...string) *testDaemon {
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
	d := &testDaemon{dataDir: t.TempDir(), stderr: &lockedBuffer{}}
	args := append(command[1:], "--listen", "127.0.0.1:0", "--data-dir", d.dataDir)
	cmd := exec.Command(command[0], append(args, extraArgs...)...)
	cmd.Stderr = d.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", command, err)
	}
	exited := make(chan error, 1)
	var once sync.Once
	d.stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
				t.Errorf("filetoolsd did not exit within 10 s of SIGTERM; stderr:\n%s", d.stderr)
			}
		})
	}
	t.Cleanup(d.stop)

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

	select {
	case d.address = <-address:
	case err := <-exited:
		exited <- err
		t.Fatalf("filetoolsd exited before listening (%v); stderr:\n%s", err, d.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("filetoolsd printed no `listening on HOST:PORT` line within 30 s; stderr:\n%s", d.stderr)
	}
	return d
}

// conn is a plain gRPC connection to the daemon, for the generated stubs.
func (d *testDaemon) conn(t *testing.T) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(d.address, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// client is a filetools.Client of the daemon, closed when the test ends.
func (d *testDaemon) client(t *testing.T, options ...filetools.Option) *filetools.Client {
	t.Helper()
	client, err := filetools.Dial(testContext(t), d.address, options...)
	if err != nil {
		t.Fatalf("Dial %s: %v", d.address, err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

// callLog is a line the daemon logs when a call ends.
type callLog struct {
	Method    string `json:"method"`
	Workspace string `json:"workspace"`
	Code      string `json:"code"`
	Reason    string `json:"reason"`
}

// awaitCallLogs waits until the daemon has logged n ended calls of method
// ("filetools.v1.Files/Search") on workspace, and returns them. The wait is
// bounded only so that a failure cannot hang the suite.
func (d *testDaemon) awaitCallLogs(t *testing.T, method, workspace string, n int) []callLog {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var found []callLog
		for _, line := range strings.Split(d.stderr.String(), "\n") {
			var entry callLog
			if json.Unmarshal([]byte(line), &entry) == nil && entry.Method == method && entry.Workspace == workspace && entry.Code != "" {
				found = append(found, entry)
			}
		}
		if len(found) >= n {
			return found
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon logged %d ended %s calls on %q, want %d; stderr:\n%s", len(found), method, workspace, n, d.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lockedBuffer collects the daemon's stderr while tests read it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

package filetools_test

// Trace context from the Go client to the daemon's spans, and the version. A
// real OTLP/HTTP receiver (test/support/otlp_receiver.py, decoding with the
// OpenTelemetry protos) gets the daemon's spans (--otlp-endpoint); the test
// sets up the OpenTelemetry SDK and the W3C propagator as a caller would, so
// the daemon's span of each call must be the child of the caller's span.

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	filetools "github.com/filetools/filetools/clients/go"
)

type receivedSpan struct {
	TraceID      string         `json:"trace_id"`
	SpanID       string         `json:"span_id"`
	ParentSpanID string         `json:"parent_span_id"`
	Name         string         `json:"name"`
	StatusCode   int            `json:"status_code"`
	Attributes   map[string]any `json:"attributes"`
}

type otlpReceiver struct {
	url   string
	mu    sync.Mutex
	spans []receivedSpan
}

// startReceiver runs the repository's OTLP receiver with the project's .venv.
func startReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	cmd := exec.Command(filepath.Join(root, ".venv", "bin", "python"), filepath.Join(root, "test", "support", "otlp_receiver.py"))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the OTLP receiver: %v", err)
	}
	t.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "listening on ") {
		t.Fatalf("the OTLP receiver did not start: %q", lines.Text())
	}
	r := &otlpReceiver{url: strings.TrimPrefix(lines.Text(), "listening on ")}
	go func() {
		for lines.Scan() {
			var span receivedSpan
			if json.Unmarshal(lines.Bytes(), &span) == nil {
				r.mu.Lock()
				r.spans = append(r.spans, span)
				r.mu.Unlock()
			}
		}
	}()
	return r
}

func (r *otlpReceiver) waitFor(t *testing.T, name, parentSpanID string) receivedSpan {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		r.mu.Lock()
		for _, span := range r.spans {
			if span.Name == name && span.ParentSpanID == parentSpanID {
				r.mu.Unlock()
				return span
			}
		}
		r.mu.Unlock()
	}
	t.Fatalf("no span %s under %s within 30 s", name, parentSpanID)
	return receivedSpan{}
}

func TestDaemonSpanOfACallIsTheChildOfTheCallersSpan(t *testing.T) {
	receiver := startReceiver(t)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100") // the daemon's batch delay (5 s by default)
	d := startDaemon(t, "--otlp-endpoint", receiver.url)
	provider := sdktrace.NewTracerProvider()
	otel.SetTracerProvider(provider)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	t.Cleanup(func() {
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
		_ = provider.Shutdown(testContext(t))
	})

	client := d.client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "t"); err != nil {
		t.Fatal(err)
	}
	ctx, caller := otel.Tracer("traces_test").Start(ctx, "agent.write")
	if _, err := client.WriteText(ctx, "t", "/a.txt", "hello\n", filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Stat(ctx, "t", "/missing", filetools.StatOptions{}); !errors.Is(err, filetools.ErrNotFound) {
		t.Fatalf("Stat of a missing file: %v", err)
	}
	caller.End()

	parent := caller.SpanContext().SpanID().String()
	write := receiver.waitFor(t, "filetools.v1.Files/Write", parent)
	if write.TraceID != caller.SpanContext().TraceID().String() {
		t.Errorf("Write's span is in trace %s, the caller's is %s", write.TraceID, caller.SpanContext().TraceID())
	}
	if write.Attributes["rpc.grpc.status_code"] != float64(0) || write.Attributes["filetools.workspace"] != "t" {
		t.Errorf("Write's span attributes: %v", write.Attributes)
	}
	stat := receiver.waitFor(t, "filetools.v1.Files/Stat", parent)
	if stat.Attributes["rpc.grpc.status_code"] != float64(5) || stat.StatusCode != 2 {
		t.Errorf("a failed Stat's span: status %d, attributes %v", stat.StatusCode, stat.Attributes)
	}
}

func TestServerVersionIsTheRepositorysAndTheClients(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct{ Version string }
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	if filetools.Version != pkg.Version {
		t.Errorf("filetools.Version is %q, package.json's is %q: run `npm run generate`", filetools.Version, pkg.Version)
	}
	answer, err := startDaemon(t).client(t).ServerVersion(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	if answer.GetVersion() != pkg.Version || answer.GetApi() != "filetools.v1" || !strings.HasPrefix(answer.GetRuntime(), "node v") {
		t.Errorf("ServerVersion: %v", answer)
	}
}

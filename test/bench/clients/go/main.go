// The Go client's bench driver (run by test/bench/clients.ts): one scenario of
// Read calls against a running daemon, the result as JSON on stdout. Takes the
// same JSON argument and prints the same JSON as read_bench.ts (see Job there).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
)

type job struct {
	Address     string `json:"address"`
	Workspace   string `json:"workspace"`
	Path        string `json:"path"`
	Scenario    string `json:"scenario"`
	Calls       int    `json:"calls"`
	Warmup      int    `json:"warmup"`
	Concurrency int    `json:"concurrency"`
	WindowBytes int64  `json:"windowBytes"`
}

type window struct {
	newlines int
	bytes    int64
	nextLine int64
}

func main() {
	var j job
	if err := json.Unmarshal([]byte(os.Args[1]), &j); err != nil {
		fail(err)
	}
	conn, err := grpc.NewClient(j.Address, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20)))
	if err != nil {
		fail(err)
	}
	defer conn.Close()
	b := bench{job: j, files: filetoolsv1.NewFilesClient(conn)}
	var result any
	switch j.Scenario {
	case "latency":
		result, err = b.latency()
	case "stream":
		result, err = b.stream()
	case "concurrent":
		result, err = b.concurrent()
	default:
		err = fmt.Errorf("unknown scenario %q", j.Scenario)
	}
	if err != nil {
		fail(err)
	}
	if err := json.NewEncoder(os.Stdout).Encode(result); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

type bench struct {
	job   job
	files filetoolsv1.FilesClient
}

// readWindow reads one whole Read window: its text's line feeds, and the trailer's bytes and next line.
func (b bench) readWindow(startLine int64, maxBytes *int64) (window, error) {
	stream, err := b.files.Read(context.Background(), &filetoolsv1.ReadRequest{
		Workspace: b.job.Workspace, Path: b.job.Path, StartLine: &startLine, MaxBytes: maxBytes,
	})
	if err != nil {
		return window{}, err
	}
	var w window
	var trailer *filetoolsv1.ReadTrailer
	for {
		message, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return window{}, err
		}
		if chunk := message.GetChunk(); chunk != nil {
			w.newlines += strings.Count(chunk.Text, "\n")
		} else if t := message.GetTrailer(); t != nil {
			trailer = t
		}
	}
	if trailer == nil {
		return window{}, errors.New("the stream ended without a trailer")
	}
	w.bytes, w.nextLine = trailer.BytesReturned, trailer.NextLine
	return w, nil
}

func (b bench) warmUp() error {
	for range b.job.Warmup {
		if _, err := b.readWindow(1, nil); err != nil {
			return err
		}
	}
	return nil
}

func (b bench) latency() (any, error) {
	if err := b.warmUp(); err != nil {
		return nil, err
	}
	samples := make([]float64, 0, b.job.Calls)
	var size int64
	for range b.job.Calls {
		started := time.Now()
		w, err := b.readWindow(1, nil)
		if err != nil {
			return nil, err
		}
		samples = append(samples, float64(time.Since(started).Nanoseconds())/1e6)
		size = w.bytes
	}
	return map[string]any{"samplesMs": samples, "bytes": size}, nil
}

// stream reads the whole file, window after window of WindowBytes, each starting at the previous one's next line.
func (b bench) stream() (any, error) {
	started := time.Now()
	var size int64
	lines, windows := 0, 0
	for line := int64(1); line != 0; windows++ {
		w, err := b.readWindow(line, &b.job.WindowBytes)
		if err != nil {
			return nil, err
		}
		size += w.bytes
		lines += w.newlines
		line = w.nextLine
	}
	return map[string]any{"seconds": time.Since(started).Seconds(), "bytes": size, "lines": lines, "windows": windows}, nil
}

// concurrent has Concurrency goroutines share Calls calls.
func (b bench) concurrent() (any, error) {
	if err := b.warmUp(); err != nil {
		return nil, err
	}
	calls := make(chan struct{}, b.job.Calls)
	for range b.job.Calls {
		calls <- struct{}{}
	}
	close(calls)
	var mu sync.Mutex
	var size int64
	var firstErr error
	var wg sync.WaitGroup
	started := time.Now()
	for range b.job.Concurrency {
		wg.Go(func() {
			for range calls {
				w, err := b.readWindow(1, nil)
				mu.Lock()
				size += w.bytes
				if err != nil && firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return map[string]any{"seconds": time.Since(started).Seconds(), "calls": b.job.Calls, "bytes": size}, nil
}

// The Go client's bench driver (run by test/bench/clients.ts): one scenario of
// reads through the filetools package against a running daemon, the result as
// JSON on stdout. Takes the same JSON argument and prints the same JSON as
// read_bench.ts (see Job there).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	filetools "github.com/filetools/filetools/clients/go"
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

func main() {
	var j job
	if err := json.Unmarshal([]byte(os.Args[1]), &j); err != nil {
		fail(err)
	}
	ctx := context.Background()
	client, err := filetools.Dial(ctx, j.Address)
	if err != nil {
		fail(err)
	}
	defer client.Close()
	b := bench{job: j, client: client, ctx: ctx}
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
	job    job
	client *filetools.Client
	ctx    context.Context
}

// readSmall reads the whole small file and returns its size in bytes.
func (b bench) readSmall() (int, error) {
	window, err := b.client.ReadText(b.ctx, b.job.Workspace, b.job.Path, filetools.ReadOptions{})
	if err != nil {
		return 0, err
	}
	return len(window.Text), nil
}

func (b bench) warmUp() error {
	for range b.job.Warmup {
		if _, err := b.readSmall(); err != nil {
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
	size := 0
	for range b.job.Calls {
		started := time.Now()
		n, err := b.readSmall()
		if err != nil {
			return nil, err
		}
		samples = append(samples, float64(time.Since(started).Nanoseconds())/1e6)
		size = n
	}
	return map[string]any{"samplesMs": samples, "bytes": size}, nil
}

// counter is where ReadTo writes the text: it keeps only the bytes and line feeds it saw.
type counter struct{ bytes, lines int64 }

func (c *counter) Write(p []byte) (int, error) {
	c.bytes += int64(len(p))
	c.lines += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

// stream reads the whole file, window after window of WindowBytes, each from the previous one's next line.
func (b bench) stream() (any, error) {
	started := time.Now()
	var text counter
	windows := 0
	for line := int64(1); line != 0; windows++ {
		window, err := b.client.ReadTo(b.ctx, b.job.Workspace, b.job.Path, &text, filetools.ReadOptions{StartLine: line, MaxBytes: b.job.WindowBytes})
		if err != nil {
			return nil, err
		}
		line = window.NextLine
	}
	return map[string]any{"seconds": time.Since(started).Seconds(), "bytes": text.bytes, "lines": text.lines, "windows": windows}, nil
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
	size := 0
	var firstErr error
	var wg sync.WaitGroup
	started := time.Now()
	for range b.job.Concurrency {
		wg.Go(func() {
			for range calls {
				n, err := b.readSmall()
				mu.Lock()
				size += n
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

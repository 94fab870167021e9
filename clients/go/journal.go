package filetools

import (
	"context"
	"errors"
	"io"
	"iter"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/timestamppb"

	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
)

// JournalEntry is one change of a workspace's journal (JournalEntry in journal.proto).
type JournalEntry = filetoolsv1.JournalEntry

// WatchOptions for Watch.
type WatchOptions struct {
	// Only changes whose path matches one of these globs ("src/**", "*.ts"); none: all.
	Globs []string
	// Start after this cursor (0: every change the journal holds); nil: only
	// what happens from now on.
	Since *uint64
	// Broken streams retried in a row before Watch yields the error (0: 20;
	// negative: never resume).
	Retries int
	// Told of the daemon's notices (e.g. outside changes found by a stat scan).
	OnNotice func(message string)
}

const (
	watchFirstBackoff = 50 * time.Millisecond
	watchMaxBackoff   = 2 * time.Second
)

// Watch yields the workspace's changes as they happen (after opts.Since
// first, when set), in order, until ctx ends or the loop is left. A broken
// stream (the daemon restarted, the connection dropped) or a WatchMissed
// event is resumed from the last cursor seen by itself, so nothing is missed
// or seen twice while the journal holds the entries; a cursor it no longer
// holds yields an *Error with ReasonCursorOutOfRange.
func (c *Client) Watch(ctx context.Context, workspace string, opts WatchOptions) iter.Seq2[*JournalEntry, error] {
	return func(yield func(*JournalEntry, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cursor := opts.Since
		retries := opts.Retries
		if retries == 0 {
			retries = 20
		}
		failures := 0
		for {
			err := c.watchOnce(ctx, workspace, opts, &cursor, &failures, yield)
			if errors.Is(err, errStopped) || ctx.Err() != nil {
				return
			}
			if err != nil {
				var rpcErr *Error
				if !errors.As(err, &rpcErr) || (rpcErr.Code != codes.Unavailable && rpcErr.Code != codes.Canceled) || failures >= retries {
					yield(nil, err)
					return
				}
				failures++
				backoff := min(watchMaxBackoff, watchFirstBackoff<<(failures-1))
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
			}
		}
	}
}

// errStopped: the caller left the loop.
var errStopped = errors.New("stopped")

// watchOnce runs one Watch stream; nil when it ended by itself (after WatchMissed), to be resumed.
func (c *Client) watchOnce(ctx context.Context, workspace string, opts WatchOptions, cursor **uint64, failures *int, yield func(*JournalEntry, error) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.journal.Watch(ctx, &filetoolsv1.WatchRequest{Workspace: workspace, Globs: opts.Globs, Cursor: *cursor})
	if err != nil {
		return fromRPC(err)
	}
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fromRPC(err)
		}
		*failures = 0
		switch event := msg.GetEvent().(type) {
		case *filetoolsv1.WatchResponse_Changes:
			for _, entry := range event.Changes.GetEntries() {
				at := entry.GetCursor()
				*cursor = &at
				if !yield(entry, nil) {
					return errStopped
				}
			}
		case *filetoolsv1.WatchResponse_Live:
			if *cursor == nil {
				at := event.Live.GetCursor()
				*cursor = &at
			}
		case *filetoolsv1.WatchResponse_Missed:
			at := event.Missed.GetResumeCursor()
			*cursor = &at // the stream ends next: watched again from there
		case *filetoolsv1.WatchResponse_Notice:
			if opts.OnNotice != nil {
				opts.OnNotice(event.Notice.GetMessage())
			}
		}
	}
}

// JournalFilter for Journal: every field is optional.
type JournalFilter struct {
	RunID       string
	Since       time.Time // zero: no lower bound
	Until       time.Time // zero: no upper bound
	AfterCursor uint64
	Globs       []string
}

// Journal yields the workspace's journal entries still held, in order,
// filtered by run, time range, cursor and globs.
func (c *Client) Journal(ctx context.Context, workspace string, filter JournalFilter) iter.Seq2[*JournalEntry, error] {
	request := &filetoolsv1.GetJournalRequest{Workspace: workspace, RunId: filter.RunID, AfterCursor: filter.AfterCursor, Globs: filter.Globs}
	if !filter.Since.IsZero() {
		request.Since = timestamppb.New(filter.Since)
	}
	if !filter.Until.IsZero() {
		request.Until = timestamppb.New(filter.Until)
	}
	return streamItems(ctx, func(ctx context.Context) (grpc.ServerStreamingClient[filetoolsv1.GetJournalResponse], error) {
		return c.journal.GetJournal(ctx, request)
	}, func(msg *filetoolsv1.GetJournalResponse, yield func(*JournalEntry) bool) bool {
		for _, entry := range msg.GetEntries() {
			if !yield(entry) {
				return false
			}
		}
		return true
	})
}

package filetools

import (
	"context"
	"errors"
	"io"
	"iter"

	"google.golang.org/grpc"

	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
)

// CreateWorkspace creates a managed workspace (ErrAlreadyExists if it exists).
func (c *Client) CreateWorkspace(ctx context.Context, workspace string) (*Workspace, error) {
	resp, err := unary(ctx, c.workspaces.CreateWorkspace, &filetoolsv1.CreateWorkspaceRequest{Workspace: workspace})
	return resp.GetWorkspace(), err
}

// GetWorkspace describes one workspace (ErrWorkspaceNotFound if there is none).
func (c *Client) GetWorkspace(ctx context.Context, workspace string) (*Workspace, error) {
	resp, err := unary(ctx, c.workspaces.GetWorkspace, &filetoolsv1.GetWorkspaceRequest{Workspace: workspace})
	return resp.GetWorkspace(), err
}

// WorkspaceStatus describes one workspace as GetWorkspace answers in full:
// its active run (on any daemon of the fleet; nil when none), its newest
// snapshot in the store, the snapshot this daemon's copy is of (CopyOf) and
// whether the copy has unpublished changes (ErrWorkspaceNotFound if there is
// none).
func (c *Client) WorkspaceStatus(ctx context.Context, workspace string) (*WorkspaceStatus, error) {
	return unary(ctx, c.workspaces.GetWorkspace, &filetoolsv1.GetWorkspaceRequest{Workspace: workspace})
}

// ListWorkspaces returns every workspace, managed and bound, sorted by id.
func (c *Client) ListWorkspaces(ctx context.Context) ([]*Workspace, error) {
	resp, err := unary(ctx, c.workspaces.ListWorkspaces, &filetoolsv1.ListWorkspacesRequest{})
	return resp.GetWorkspaces(), err
}

// DeleteWorkspaceOptions for DeleteWorkspace.
type DeleteWorkspaceOptions struct {
	DeleteSnapshots bool // also delete its snapshots from the store
}

// DeleteWorkspace deletes a managed workspace and its files (an active run
// ends without a snapshot); its snapshots stay in the store unless asked.
func (c *Client) DeleteWorkspace(ctx context.Context, workspace string, opts DeleteWorkspaceOptions) error {
	_, err := unary(ctx, c.workspaces.DeleteWorkspace, &filetoolsv1.DeleteWorkspaceRequest{Workspace: workspace, DeleteSnapshots: opts.DeleteSnapshots})
	return err
}

// StartRunOptions for StartRun.
type StartRunOptions struct {
	// "" or "LATEST": restore the newest snapshot into an absent or empty
	// workspace; "NONE": never restore; or a snapshot id.
	Restore string
	Labels  map[string]string // copied to the run's snapshot
}

// StartRun begins a run on a workspace, creating (and restoring) it as
// needed. A run already active there fails with ErrRunActive.
func (c *Client) StartRun(ctx context.Context, workspace string, opts StartRunOptions) (*Run, error) {
	resp, err := unary(ctx, c.workspaces.StartRun, &filetoolsv1.StartRunRequest{Workspace: workspace, Restore: opts.Restore, Labels: opts.Labels})
	return resp.GetRun(), err
}

// FinishRunOptions for FinishRun.
type FinishRunOptions struct {
	NoSnapshot bool              // end the run without snapshotting the workspace
	Labels     map[string]string // extra labels for the snapshot
}

// FinishRun ends a run and snapshots the workspace to the store. When the
// snapshot cannot be published (ErrContentChanged: another run published
// first; ErrRunActive: the run lost its lease) the run ends anyway and its
// work is kept as a recovered snapshot, named by the *Error's
// Metadata["recovered_snapshot"].
func (c *Client) FinishRun(ctx context.Context, workspace, runID string, opts FinishRunOptions) (*FinishRunResult, error) {
	return unary(ctx, c.workspaces.FinishRun, &filetoolsv1.FinishRunRequest{
		Workspace: workspace, RunId: runID, Snapshot: optionalTrue(opts.NoSnapshot), Labels: opts.Labels,
	})
}

// ListRuns returns the active runs this daemon knows of, sorted by
// workspace: its own (Local) and, on a shared (s3://) store, every live
// lease of the fleet, with the node holding it.
func (c *Client) ListRuns(ctx context.Context) ([]*ActiveRun, error) {
	resp, err := unary(ctx, c.workspaces.ListRuns, &filetoolsv1.ListRunsRequest{})
	return resp.GetRuns(), err
}

// AbandonRunOptions for AbandonRun.
type AbandonRunOptions struct {
	RunID  string // the run to end; "" = whichever is active
	Reason string // recorded with the recovered snapshot (RecoveredReason)
}

// AbandonRun ends a workspace's active run without publishing, for a stuck
// run. A run of this daemon ends at once and its unpublished work is kept as
// the recovered snapshot (Recovered); another daemon's run has its lease
// broken (LeaseBroken). No such active run: ErrNotFound.
func (c *Client) AbandonRun(ctx context.Context, workspace string, opts AbandonRunOptions) (*AbandonRunResult, error) {
	return unary(ctx, c.workspaces.AbandonRun, &filetoolsv1.AbandonRunRequest{Workspace: workspace, RunId: opts.RunID, Reason: opts.Reason})
}

// Changes yields a run's change set in order. Breaking out of the loop
// cancels the call.
func (c *Client) Changes(ctx context.Context, workspace, runID string) iter.Seq2[*Change, error] {
	open := func(ctx context.Context) (grpc.ServerStreamingClient[filetoolsv1.GetChangeSetResponse], error) {
		return c.workspaces.GetChangeSet(ctx, &filetoolsv1.GetChangeSetRequest{Workspace: workspace, RunId: runID})
	}
	return streamItems(ctx, open, func(msg *filetoolsv1.GetChangeSetResponse, yield func(*Change) bool) bool {
		for _, change := range msg.GetChanges() {
			if !yield(change) {
				return false
			}
		}
		return true
	})
}

// ListSnapshotsOptions for ListSnapshots.
type ListSnapshotsOptions struct {
	// Also the recovered snapshots (Recovered: work that could not be
	// published, kept but never restored by LATEST).
	IncludeRecovered bool
}

// ListSnapshots returns a workspace's snapshots, newest first: the main
// line, or with IncludeRecovered also the recovered ones. opts is optional
// (at most one).
func (c *Client) ListSnapshots(ctx context.Context, workspace string, opts ...ListSnapshotsOptions) ([]*Snapshot, error) {
	var o ListSnapshotsOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	resp, err := unary(ctx, c.workspaces.ListSnapshots, &filetoolsv1.ListSnapshotsRequest{Workspace: workspace, IncludeRecovered: o.IncludeRecovered})
	return resp.GetSnapshots(), err
}

// DiffOptions choose what DiffSnapshots compares a snapshot to: by default
// the live workspace (its files hashed now).
type DiffOptions struct {
	To      string       // a snapshot id to compare to instead of the live workspace
	Summary *DiffSummary // when set, filled in with the counts once the loop has ended
}

// DiffSummary ends a diff.
type DiffSummary struct {
	From, To                            string // the snapshots compared; To "" for the live workspace
	Added, Removed, Modified, Unchanged int64  // paths of each kind
}

// DiffSnapshots yields what changed from snapshot from ("" = the newest) to
// opts.To, or to the live workspace: the paths of the newer side in walk
// order, then the removed ones. Breaking out of the loop cancels the call.
func (c *Client) DiffSnapshots(ctx context.Context, workspace, from string, opts DiffOptions) iter.Seq2[*DiffEntry, error] {
	open := func(ctx context.Context) (grpc.ServerStreamingClient[filetoolsv1.DiffSnapshotsResponse], error) {
		return c.workspaces.DiffSnapshots(ctx, &filetoolsv1.DiffSnapshotsRequest{Workspace: workspace, From: from, To: opts.To, Live: opts.To == ""})
	}
	return streamItems(ctx, open, func(msg *filetoolsv1.DiffSnapshotsResponse, yield func(*DiffEntry) bool) bool {
		if s := msg.GetSummary(); s != nil {
			if opts.Summary != nil {
				*opts.Summary = DiffSummary{
					From: s.GetFrom(), To: s.GetTo(),
					Added: s.GetAdded(), Removed: s.GetRemoved(), Modified: s.GetModified(), Unchanged: s.GetUnchanged(),
				}
			}
			return true
		}
		for _, entry := range msg.GetEntries().GetEntries() {
			if !yield(entry) {
				return false
			}
		}
		return true
	})
}

// RestoreSnapshot replaces a workspace's contents with a snapshot ("" = the
// newest) and returns it.
func (c *Client) RestoreSnapshot(ctx context.Context, workspace, snapshotID string) (*Snapshot, error) {
	resp, err := unary(ctx, c.workspaces.RestoreSnapshot, &filetoolsv1.RestoreSnapshotRequest{Workspace: workspace, SnapshotId: snapshotID})
	return resp.GetSnapshot(), err
}

// ExportOptions choose what ExportSnapshot sends: by default the newest
// snapshot's whole tarball (gzip).
type ExportOptions struct {
	SnapshotID string   // "" = the newest
	Live       bool     // a fresh tarball of the workspace as it is now instead
	Include    []string // globs of the files to keep (e.g. "out/**"); none = all
	Progress   Progress // told the bytes received so far
}

// ExportSnapshot copies a snapshot's tarball to w and checks it against the
// size and sha256 the daemon announced first (a mismatch is an *Error with
// codes.DataLoss, after w has had the bytes: use ExportSnapshotToFile to
// keep a bad tarball from ever appearing).
func (c *Client) ExportSnapshot(ctx context.Context, workspace string, w io.Writer, opts ExportOptions) (*ExportInfo, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.workspaces.ExportSnapshot(ctx, &filetoolsv1.ExportSnapshotRequest{
		Workspace: workspace, SnapshotId: opts.SnapshotID, Live: opts.Live, Include: opts.Include,
	})
	if err != nil {
		return nil, fromRPC(err)
	}
	return receiveBytes[*ExportInfo](stream.Recv, w, opts.Progress)
}

// ExportSnapshotToFile writes a snapshot's tarball to path atomically: the
// file appears, complete and checked, only when the export succeeded.
func (c *Client) ExportSnapshotToFile(ctx context.Context, workspace, path string, opts ExportOptions) (*ExportInfo, error) {
	var info *ExportInfo
	err := writeFileAtomically(path, func(w io.Writer) (err error) {
		info, err = c.ExportSnapshot(ctx, workspace, w, opts)
		return err
	})
	return info, err
}

// ExportInto is ExportSnapshot into a file of the same workspace, at the
// workspace path destination: the export streamed straight into an Upload
// (with upload's options), never through this machine's disk. The daemon
// writes the file atomically once the bytes have arrived and checked out
// against the export's header, so a failed or cancelled export leaves no
// file, whole or partial. opts.Progress is told the bytes moved.
func (c *Client) ExportInto(ctx context.Context, workspace, destination string, opts ExportOptions, upload UploadOptions) (info *ExportInfo, file *UploadResult, err error) {
	err = pipe(ctx,
		func(ctx context.Context, w io.Writer) (err error) {
			info, err = c.ExportSnapshot(ctx, workspace, w, opts)
			return err
		},
		func(ctx context.Context, r io.Reader) (err error) {
			file, err = c.Upload(ctx, workspace, destination, r, upload)
			return err
		})
	return info, file, err
}

// ImportFrom is ImportArchive of a tarball in the same workspace, at the
// workspace path archive: its Download streamed straight into the import.
// Bytes that do not match the download's header cancel the import, which
// then changes nothing. progress is told the bytes moved (it may be nil).
func (c *Client) ImportFrom(ctx context.Context, workspace, archive, dir string, progress Progress) (info *DownloadInfo, imported *ImportResult, err error) {
	err = pipe(ctx,
		func(ctx context.Context, w io.Writer) (err error) {
			info, err = c.download(ctx, &filetoolsv1.DownloadRequest{Workspace: workspace, Path: archive}, w, progress)
			return err
		},
		func(ctx context.Context, r io.Reader) (err error) {
			imported, err = c.ImportArchive(ctx, workspace, dir, r)
			return err
		})
	return info, imported, err
}

var errReceiverEnded = errors.New("filetools: the receiving call has ended")

// pipe runs two calls at once, feed writing what consume reads, and ends
// both when either fails. feed's error closes the pipe, so consume fails
// with it (and its call is cancelled: the daemon keeps nothing of it);
// consume ending first stops feed. The error is the one that came first:
// feed's when consume failed because of it, else consume's.
func pipe(ctx context.Context, feed func(context.Context, io.Writer) error, consume func(context.Context, io.Reader) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	from, to := io.Pipe()
	fed := make(chan error, 1)
	go func() {
		err := feed(ctx, to)
		to.CloseWithError(err) // nil: consume reads io.EOF and completes
		fed <- err
	}()
	err := consume(ctx, from)
	from.CloseWithError(errReceiverEnded)
	if feedErr := <-fed; feedErr != nil && (err == nil || errors.Is(err, feedErr)) {
		return feedErr
	}
	return err
}

// ImportArchive unpacks a tarball (plain or gzip) read from r into a
// directory of the workspace ("" = the root). An unsafe archive fails with
// ErrUnsafeArchive and changes nothing; so does an error of r, which is
// returned wrapped, as it is.
func (c *Client) ImportArchive(ctx context.Context, workspace, dir string, r io.Reader) (*ImportResult, error) {
	header := &filetoolsv1.ImportHeader{Workspace: workspace, Path: dir}
	return sendStream(ctx, c.workspaces.ImportArchive, r,
		&filetoolsv1.ImportArchiveRequest{Event: &filetoolsv1.ImportArchiveRequest_Header{Header: header}},
		func(data []byte) *filetoolsv1.ImportArchiveRequest {
			return &filetoolsv1.ImportArchiveRequest{Event: &filetoolsv1.ImportArchiveRequest_Chunk{Chunk: &filetoolsv1.DataChunk{Data: data}}}
		})
}

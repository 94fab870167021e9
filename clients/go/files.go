package filetools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
)

// ReadOptions choose a window of lines. The zero value reads the whole file
// (up to MaxBytes).
type ReadOptions struct {
	// First line to return, 1-based; 0 = 1.
	StartLine int64
	// Lines to return; 0 = to the end of the file (use Stat for metadata only).
	LineCount int64
	// Instead of StartLine: the last Tail lines.
	Tail int64
	// "utf-8" (default when empty), "utf-16le", "latin1" or "ascii".
	Encoding string
	// Cap on the UTF-8 bytes of text; 0 = the daemon's default (10 MiB).
	MaxBytes int64
	// A snapshot id (ListSnapshots): read the file as it was at that stored
	// snapshot instead of the live workspace; "" = live.
	AtSnapshot string
}

func (o ReadOptions) request(workspace, path string) *filetoolsv1.ReadRequest {
	req := &filetoolsv1.ReadRequest{Workspace: workspace, Path: path, Encoding: o.Encoding, AtSnapshot: o.AtSnapshot}
	if o.StartLine > 0 {
		req.StartLine = &o.StartLine
	}
	if o.LineCount > 0 {
		req.LineCount = &o.LineCount
	}
	if o.Tail > 0 {
		req.TailLines = &o.Tail
	}
	if o.MaxBytes > 0 {
		req.MaxBytes = &o.MaxBytes
	}
	return req
}

// Window is what a read returned, and where to go on from.
type Window struct {
	File     *FileInfo
	Version  string // the file's version when it was opened (for IfVersion)
	Encoding string
	// Line numbers of the first and last line returned; both 0 when none was.
	FirstLine, LastLine int64
	// Lines in the file, or -1 when the daemon did not know.
	TotalLines int64
	// The StartLine to read next; 0 when the window reached the end of the file.
	NextLine int64
	// Truncated: MaxBytes stopped the window early. LineCut: a single line
	// longer than MaxBytes was cut. EOF: the window reached the end of the file.
	Truncated, LineCut, EOF bool
}

// TextWindow is a Window with its text: whole lines with their line endings.
type TextWindow struct {
	Text string
	Window
}

// ReadText returns a window of a text file's lines. To page through a file,
// read again from NextLine until it is 0.
func (c *Client) ReadText(ctx context.Context, workspace, path string, opts ReadOptions) (*TextWindow, error) {
	var text strings.Builder
	// The text is taken as it comes: the Read may share the stream of small calls.
	window, err := c.ReadTo(eager(ctx), workspace, path, &text, opts)
	if err != nil {
		return nil, err
	}
	return &TextWindow{Text: text.String(), Window: *window}, nil
}

// ReadTo streams a window of a text file's lines to w as they arrive (for
// windows too large to hold in memory). Errors of w are returned wrapped, as
// they are, and cancel the call.
func (c *Client) ReadTo(ctx context.Context, workspace, path string, w io.Writer, opts ReadOptions) (*Window, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.files.Read(ctx, opts.request(workspace, path))
	if err != nil {
		return nil, fromRPC(err)
	}
	var window *Window
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil, newClientError(codes.Internal, "the daemon's Read stream ended without a trailer")
		}
		if err != nil {
			return nil, fromRPC(err)
		}
		switch event := msg.GetEvent().(type) {
		case *filetoolsv1.ReadResponse_Header:
			header := event.Header
			window = &Window{File: header.GetFile(), Version: header.GetFile().GetVersion(), Encoding: header.GetEncoding(), TotalLines: -1}
			if header.TotalLines != nil {
				window.TotalLines = header.GetTotalLines()
			}
		case *filetoolsv1.ReadResponse_Chunk:
			if window == nil {
				return nil, newClientError(codes.Internal, "the daemon sent Read text before the header")
			}
			if window.FirstLine == 0 {
				window.FirstLine = event.Chunk.GetFirstLine()
			}
			if _, err := io.WriteString(w, event.Chunk.GetText()); err != nil {
				return nil, fmt.Errorf("filetools: writing the text read: %w", err)
			}
		case *filetoolsv1.ReadResponse_Trailer:
			if window == nil {
				return nil, newClientError(codes.Internal, "the daemon sent the Read trailer before the header")
			}
			trailer := event.Trailer
			if trailer.GetLinesReturned() > 0 {
				window.LastLine = window.FirstLine + trailer.GetLinesReturned() - 1
			}
			if trailer.TotalLines != nil {
				window.TotalLines = trailer.GetTotalLines()
			}
			window.NextLine = trailer.GetNextLine()
			window.Truncated, window.LineCut, window.EOF = trailer.GetTruncated(), trailer.GetLineCut(), trailer.GetEof()
			// Read on to the call's status, so that it ends OK rather than cancelled by the return.
			if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
				if err == nil {
					return nil, newClientError(codes.Internal, "the daemon sent more after the Read trailer")
				}
				return nil, fromRPC(err)
			}
			return window, nil
		}
	}
}

// WriteOptions for WriteText and WriteBytes. The zero value creates or
// replaces the file, creating missing parent directories, in UTF-8, keeping
// a CRLF file's line endings.
type WriteOptions struct {
	Mode         WriteMode
	Newline      Newline // text only
	Encoding     string  // text only: "utf-8" (default), "utf-16le", "latin1", "ascii"
	NoCreateDirs bool    // fail instead of creating missing parent directories
	IfVersion    string  // write only if the file's version is still this one
}

func (o WriteOptions) request(workspace, path string) *filetoolsv1.WriteRequest {
	return &filetoolsv1.WriteRequest{
		Workspace:  workspace,
		Path:       path,
		Encoding:   o.Encoding,
		CreateDirs: optionalTrue(o.NoCreateDirs),
		Mode:       o.Mode,
		Newline:    o.Newline,
		IfVersion:  o.IfVersion,
	}
}

// WriteText creates or replaces a text file atomically.
func (c *Client) WriteText(ctx context.Context, workspace, path, text string, opts WriteOptions) (*WriteResult, error) {
	req := opts.request(workspace, path)
	req.Body = &filetoolsv1.WriteRequest_Content{Content: text}
	return unary(ctx, c.files.Write, req)
}

// WriteBytes creates or replaces a file with data as it is, atomically (for
// large files, Upload streams instead).
func (c *Client) WriteBytes(ctx context.Context, workspace, path string, data []byte, opts WriteOptions) (*WriteResult, error) {
	req := opts.request(workspace, path)
	req.Body = &filetoolsv1.WriteRequest_Data{Data: data}
	return unary(ctx, c.files.Write, req)
}

// TextEdit replaces Old (which must occur exactly once, or at least once
// with ReplaceAll) by New.
type TextEdit struct {
	Old, New   string
	ReplaceAll bool
}

// EditOptions for Edit.
type EditOptions struct {
	DryRun    bool   // compute the result and diff, write nothing
	IfVersion string // edit only if the file's version is still this one
	Encoding  string // "utf-8" (default), "utf-16le", "latin1", "ascii"
}

// Edit applies exact string replacements in order, all or nothing. A
// missing or ambiguous Old fails with ErrOldTextNotFound or
// ErrOldTextNotUnique (the metadata says which edit, and a hint).
func (c *Client) Edit(ctx context.Context, workspace, path string, edits []TextEdit, opts EditOptions) (*EditResult, error) {
	req := &filetoolsv1.EditRequest{Workspace: workspace, Path: path, DryRun: opts.DryRun, IfVersion: opts.IfVersion, Encoding: opts.Encoding}
	for _, e := range edits {
		req.Edits = append(req.Edits, &filetoolsv1.TextEdit{OldText: e.Old, NewText: e.New, ReplaceAll: e.ReplaceAll})
	}
	return unary(ctx, c.files.Edit, req)
}

// ApplyPatch applies a patch in the Codex apply_patch format to several
// files, all or nothing (ApplyPatch in the proto); with dryRun it only checks
// every hunk and says what would change.
func (c *Client) ApplyPatch(ctx context.Context, workspace, patch string, dryRun bool) (*filetoolsv1.ApplyPatchResponse, error) {
	return unary(ctx, c.files.ApplyPatch, &filetoolsv1.ApplyPatchRequest{Workspace: workspace, Patch: patch, DryRun: dryRun})
}

// DeleteOptions for Delete.
type DeleteOptions struct {
	Recursive bool   // remove a directory and all it holds
	IfVersion string // delete a file only if its version is still this one
}

// Delete removes a file, symlink or directory; existed is false when there
// was nothing to remove (not an error).
func (c *Client) Delete(ctx context.Context, workspace, path string, opts DeleteOptions) (existed bool, err error) {
	resp, err := unary(ctx, c.files.Delete, &filetoolsv1.DeleteRequest{Workspace: workspace, Path: path, Recursive: opts.Recursive, IfVersion: opts.IfVersion})
	return resp.GetExisted(), err
}

// MoveOptions for Move.
type MoveOptions struct {
	Overwrite    bool   // replace an existing destination file (or empty directory)
	NoCreateDirs bool   // fail instead of creating the destination's missing parents
	IfVersion    string // move only if the source's version is still this one
}

// Move renames or moves a file or directory and returns it as it is now.
func (c *Client) Move(ctx context.Context, workspace, source, destination string, opts MoveOptions) (*FileInfo, error) {
	resp, err := unary(ctx, c.files.Move, &filetoolsv1.MoveRequest{
		Workspace: workspace, Source: source, Destination: destination,
		Overwrite: opts.Overwrite, CreateDirs: optionalTrue(opts.NoCreateDirs), IfVersion: opts.IfVersion,
	})
	return resp.GetFile(), err
}

// MakeDirOptions for MakeDir.
type MakeDirOptions struct {
	NoParents bool // fail instead of creating missing parents
}

// MakeDir creates a directory and its missing parents; created is false
// when it existed already.
func (c *Client) MakeDir(ctx context.Context, workspace, path string, opts MakeDirOptions) (created bool, err error) {
	resp, err := unary(ctx, c.files.MakeDir, &filetoolsv1.MakeDirRequest{Workspace: workspace, Path: path, Parents: optionalTrue(opts.NoParents)})
	return resp.GetCreated(), err
}

// StatOptions for Stat: what to find out beyond lstat's answer.
type StatOptions struct {
	DetectBinary bool // fill IsBinary (reads the first 8 KiB)
	CountLines   bool // fill LineCount (reads the whole file)
	// A snapshot id: describe the entry as it was at that stored snapshot; "" = live.
	AtSnapshot string
}

// Stat describes one entry (a symlink as a symlink).
func (c *Client) Stat(ctx context.Context, workspace, path string, opts StatOptions) (*FileInfo, error) {
	resp, err := unary(ctx, c.files.Stat, &filetoolsv1.StatRequest{Workspace: workspace, Path: path, DetectBinary: opts.DetectBinary, CountLines: opts.CountLines, AtSnapshot: opts.AtSnapshot})
	return resp.GetFile(), err
}

// ListOptions for List. The zero value lists the directory's own entries,
// hidden ones included, without what .gitignore excludes, up to 10,000.
type ListOptions struct {
	Pattern        string // glob matched against the path relative to the directory, e.g. "**/*.go"
	Recursive      bool
	MaxDepth       int32 // with Recursive: 1 = the directory's own entries; 0 = no limit
	SkipHidden     bool  // leave out names starting with "."
	IncludeIgnored bool  // also list what .gitignore excludes, and .git
	MaxEntries     int32 // 0 = 10,000
	// A snapshot id: list the directory as it was at that stored snapshot; "" = live.
	AtSnapshot string
	// When set, filled with the listing's summary once the loop has read it all.
	Summary *ListSummary
}

// ListSummary ends a listing.
type ListSummary struct {
	Total     int64 // entries sent
	Truncated bool  // MaxEntries stopped the listing
}

// List yields the entries under a directory ("" or "/" = the root).
// Breaking out of the loop cancels the call.
func (c *Client) List(ctx context.Context, workspace, path string, opts ListOptions) iter.Seq2[*FileInfo, error] {
	req := &filetoolsv1.ListRequest{
		Workspace: workspace, Path: path, Pattern: opts.Pattern, Recursive: opts.Recursive,
		IncludeHidden: optionalTrue(opts.SkipHidden), RespectGitignore: optionalTrue(opts.IncludeIgnored),
		AtSnapshot: opts.AtSnapshot,
	}
	if opts.MaxDepth > 0 {
		req.MaxDepth = &opts.MaxDepth
	}
	if opts.MaxEntries > 0 {
		req.MaxEntries = &opts.MaxEntries
	}
	open := func(ctx context.Context) (grpc.ServerStreamingClient[filetoolsv1.ListResponse], error) {
		return c.files.List(ctx, req)
	}
	return streamItems(ctx, open, func(msg *filetoolsv1.ListResponse, yield func(*FileInfo) bool) bool {
		if summary := msg.GetSummary(); summary != nil && opts.Summary != nil {
			*opts.Summary = ListSummary{Total: summary.GetTotal(), Truncated: summary.GetTruncated()}
		}
		for _, entry := range msg.GetEntries().GetEntries() {
			if !yield(entry) {
				return false
			}
		}
		return true
	})
}

// SearchOptions for Search, SearchFiles and SearchCounts. The zero value
// searches the whole workspace for an ECMAScript regular expression,
// without what .gitignore excludes, up to 100 results.
type SearchOptions struct {
	Path            string // file or directory to search; "" = the root
	FixedStrings    bool   // the pattern is a literal
	CaseInsensitive bool
	Include         []string // globs a file must match (any); "*.go" at any depth, "src/**" from Path
	Exclude         []string // globs excluding files and directories
	ContextBefore   int32
	ContextAfter    int32
	MaxResults      int32       // 0 = 100; at most 10,000
	MaxFileSize     int64       // skip larger files; 0 = no limit
	IncludeIgnored  bool        // also search what .gitignore excludes, and .git
	Order           SearchOrder // OrderPath (the zero value) or OrderFound
	// When set, filled with the search's summary once the loop has read it all.
	Summary *SearchSummary
}

// SearchSummary ends a search.
type SearchSummary struct {
	FilesSearched, FilesMatched, Matches int64
	BinarySkipped, TooLargeSkipped       int64
	BytesSearched                        int64
	Truncated                            bool // MaxResults stopped the search
	TimedOut                             bool // the time budget stopped it (the results are those found until then)
}

// Search yields the lines matching pattern, with context, as the daemon
// finds them. Breaking out of the loop cancels the call and the daemon's
// work.
func (c *Client) Search(ctx context.Context, workspace, pattern string, opts SearchOptions) iter.Seq2[*Match, error] {
	return search(c, ctx, opts.request(workspace, pattern, filetoolsv1.OutputMode_OUTPUT_MODE_CONTENT), opts.Summary,
		func(msg *filetoolsv1.SearchResponse) []*Match {
			if batch := msg.GetMatches(); batch != nil {
				return batch.GetMatches()
			}
			return only(msg.GetMatch())
		})
}

// SearchFiles yields the paths of the files with a match (as grep -l).
func (c *Client) SearchFiles(ctx context.Context, workspace, pattern string, opts SearchOptions) iter.Seq2[string, error] {
	return search(c, ctx, opts.request(workspace, pattern, filetoolsv1.OutputMode_OUTPUT_MODE_FILES_WITH_MATCHES), opts.Summary,
		func(msg *filetoolsv1.SearchResponse) []string {
			if file := msg.GetFile(); file != nil {
				return []string{file.GetPath()}
			}
			return nil
		})
}

// SearchCounts yields, for each file with a match, its matching-line count
// (as grep -c).
func (c *Client) SearchCounts(ctx context.Context, workspace, pattern string, opts SearchOptions) iter.Seq2[*FileMatchCount, error] {
	return search(c, ctx, opts.request(workspace, pattern, filetoolsv1.OutputMode_OUTPUT_MODE_COUNT), opts.Summary,
		func(msg *filetoolsv1.SearchResponse) []*FileMatchCount { return only(msg.GetCount()) })
}

// only is the one result a message holds, or none.
func only[T any](item *T) []*T {
	if item == nil {
		return nil
	}
	return []*T{item}
}

func (o SearchOptions) request(workspace, pattern string, mode filetoolsv1.OutputMode) *filetoolsv1.SearchRequest {
	req := &filetoolsv1.SearchRequest{
		Workspace: workspace, Path: o.Path, Pattern: pattern,
		FixedStrings: o.FixedStrings, CaseInsensitive: o.CaseInsensitive,
		Include: o.Include, Exclude: o.Exclude,
		ContextBefore: o.ContextBefore, ContextAfter: o.ContextAfter,
		RespectGitignore: optionalTrue(o.IncludeIgnored), OutputMode: mode,
		BatchMatches: true, Order: o.Order,
	}
	if o.MaxResults > 0 {
		req.MaxResults = &o.MaxResults
	}
	if o.MaxFileSize > 0 {
		req.MaxFileSize = &o.MaxFileSize
	}
	return req
}

// search yields the results each message carries (results(msg): none, one, or a batch of matches).
func search[T any](c *Client, ctx context.Context, req *filetoolsv1.SearchRequest, summary *SearchSummary, results func(*filetoolsv1.SearchResponse) []T) iter.Seq2[T, error] {
	open := func(ctx context.Context) (grpc.ServerStreamingClient[filetoolsv1.SearchResponse], error) {
		return c.files.Search(ctx, req)
	}
	return streamItems(ctx, open, func(msg *filetoolsv1.SearchResponse, yield func(T) bool) bool {
		if s := msg.GetSummary(); s != nil {
			if summary != nil {
				*summary = SearchSummary{
					FilesSearched: s.GetFilesSearched(), FilesMatched: s.GetFilesMatched(), Matches: s.GetMatches(),
					BinarySkipped: s.GetBinarySkipped(), TooLargeSkipped: s.GetTooLargeSkipped(),
					BytesSearched: s.GetBytesSearched(), Truncated: s.GetTruncated(), TimedOut: s.GetTimedOut(),
				}
			}
			return true
		}
		for _, item := range results(msg) {
			if !yield(item) {
				return false
			}
		}
		return true
	})
}

// UploadOptions for Upload. The zero value creates or replaces the file,
// creating missing parent directories.
type UploadOptions struct {
	Mode         WriteMode // APPEND is not allowed
	NoCreateDirs bool
	IfVersion    string
	SHA256       string // when set, the hex SHA-256 the bytes must have (else nothing is written)
}

// Upload streams r's bytes into a file, written atomically once r is
// exhausted. Errors of r are returned wrapped, as they are, and the daemon
// writes nothing.
func (c *Client) Upload(ctx context.Context, workspace, path string, r io.Reader, opts UploadOptions) (*UploadResult, error) {
	header := &filetoolsv1.UploadHeader{
		Workspace: workspace, Path: path, Mode: opts.Mode,
		CreateDirs: optionalTrue(opts.NoCreateDirs), IfVersion: opts.IfVersion, Sha256: opts.SHA256,
	}
	return sendStream(ctx, c.files.Upload, r,
		&filetoolsv1.UploadRequest{Event: &filetoolsv1.UploadRequest_Header{Header: header}},
		func(data []byte) *filetoolsv1.UploadRequest {
			return &filetoolsv1.UploadRequest{Event: &filetoolsv1.UploadRequest_Chunk{Chunk: &filetoolsv1.DataChunk{Data: data}}}
		})
}

// Download copies a file's bytes to w and checks them against the size and
// sha256 the daemon announced (a mismatch is an *Error with codes.DataLoss).
func (c *Client) Download(ctx context.Context, workspace, path string, w io.Writer) (*DownloadInfo, error) {
	return c.download(ctx, &filetoolsv1.DownloadRequest{Workspace: workspace, Path: path}, w, nil)
}

// DownloadAt is Download of the file as it was at a stored snapshot (an id
// from ListSnapshots), read from the store; the live workspace is not touched.
func (c *Client) DownloadAt(ctx context.Context, workspace, snapshot, path string, w io.Writer) (*DownloadInfo, error) {
	return c.download(ctx, &filetoolsv1.DownloadRequest{Workspace: workspace, Path: path, AtSnapshot: snapshot}, w, nil)
}

func (c *Client) download(ctx context.Context, req *filetoolsv1.DownloadRequest, w io.Writer, progress Progress) (*DownloadInfo, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.files.Download(ctx, req)
	if err != nil {
		return nil, fromRPC(err)
	}
	return receiveBytes[*DownloadInfo](stream.Recv, w, progress)
}

// optionalTrue is the proto field for a setting whose default is true,
// given the Go option that turns it off.
func optionalTrue(off bool) *bool {
	on := !off
	return &on
}

// unary calls a generated unary stub and turns its error into an *Error.
func unary[Req, Resp any](ctx context.Context, call func(context.Context, *Req, ...grpc.CallOption) (*Resp, error), req *Req) (*Resp, error) {
	resp, err := call(ctx, req)
	return resp, fromRPC(err)
}

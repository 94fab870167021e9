package filetools

// The tools of the catalogue, callable by name: definitions in the shapes
// model APIs take (OpenAI function calling, Anthropic tool use), and Call →
// what the model should read, plus the structured result for programs. The
// arguments are validated against the catalogue's JSON Schema first; nothing
// a model sends makes Call fail or panic. clients/ts/src/tools/dispatcher.ts
// is the reference: the three clients' dispatchers say the same thing for
// the same call, checked by catalogue/conformance.json.

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"

	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
)

// catalogueJSON is catalogue/tools.json of the repository, copied into the
// module by `npm run generate` (embed cannot reach outside the module).
//
//go:embed catalogue/tools.json
var catalogueJSON []byte

// strictSchemasJSON is each tool's argument schema in OpenAI's strict mode,
// derived from the catalogue by the same step (scripts/openai-strict.mjs).
//
//go:embed catalogue/openai-strict.json
var strictSchemasJSON []byte

// ToolAnnotations are a tool's MCP annotations.
type ToolAnnotations struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	OpenWorldHint   bool `json:"openWorldHint"`
}

// ToolDefinition is one tool of the catalogue.
type ToolDefinition struct {
	Name        string          `json:"name"` // snake_case, e.g. "read", "make_dir"
	Title       string          `json:"title"`
	RPC         string          `json:"rpc"`         // the RPC the tool calls, e.g. "filetools.v1.Files/Read"
	Description string          `json:"description"` // model-facing: what the tool does and how to use it well
	Annotations ToolAnnotations `json:"annotations"`
	// The JSON Schema of the arguments, as the catalogue writes it (its
	// properties in the catalogue's order, which a model sees).
	InputSchema json.RawMessage `json:"input_schema"`
	// The JSON Schema of the structured result of a call that succeeded
	// (MCP's outputSchema).
	OutputSchema json.RawMessage `json:"output_schema"`
	// This tool's own sentences for some error reasons, used instead of the
	// shared ones.
	ErrorHints map[string][]string `json:"error_hints,omitempty"`
}

// OpenAITool is a tool for OpenAI-style function calling (the tools of a
// chat completion or response request).
type OpenAITool struct {
	Type     string         `json:"type"` // "function"
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is the function of an OpenAITool.
type OpenAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict,omitempty"` // true in OpenAIStrictTools
}

// AnthropicTool is a tool for Anthropic tool use (the tools of a Messages
// request).
type AnthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// ToolResult is what a tool call gives back.
type ToolResult struct {
	// What the model reads.
	Text string `json:"text"`
	// True when the call failed; Text then says why and what to do next.
	IsError bool `json:"is_error"`
	// The result as data (snake_case keys; numbers as int64, absent values
	// as nil), for programs and MCP's structuredContent.
	Structured map[string]any `json:"structured"`
	// What the model sees besides the text: the image a read of an image returns.
	Images []ImageContent `json:"images,omitempty"`
}

// DispatcherOptions for NewDispatcher.
type DispatcherOptions struct {
	// Offer only the tools that change nothing (read, list, search, stat,
	// changes, list_snapshots).
	ReadOnly bool
}

// Lines a read returns unless told otherwise, and the text it may carry: a
// window a model can take in. Entries a list returns unless told otherwise.
const (
	defaultReadLines   = 2000
	readMaxBytes       = 100_000
	defaultListEntries = 1000
	// The most entries List gives at once: a workspace's files, when changes
	// has no snapshot to compare with.
	listMaxEntries = 100_000
)

// Dispatcher calls the catalogue's tools on one workspace of a daemon. It is
// safe for concurrent use.
type Dispatcher struct {
	client    *Client
	workspace string
	tools     []ToolDefinition
}

// NewDispatcher offers the catalogue's tools on workspace, through client.
func NewDispatcher(client *Client, workspace string, opts DispatcherOptions) *Dispatcher {
	d := &Dispatcher{client: client, workspace: workspace}
	for _, tool := range toolCatalogue().Tools {
		if !opts.ReadOnly || tool.Annotations.ReadOnlyHint {
			d.tools = append(d.tools, tool)
		}
	}
	return d
}

// Definitions are the tools offered, as the catalogue defines them. Their
// schemas (here and in OpenAITools and AnthropicTools) are the catalogue's
// own bytes: read them, do not change them.
func (d *Dispatcher) Definitions() []ToolDefinition { return slices.Clone(d.tools) }

// OpenAITools are the tools offered, for OpenAI-style function calling.
func (d *Dispatcher) OpenAITools() []OpenAITool {
	tools := make([]OpenAITool, len(d.tools))
	for i, tool := range d.tools {
		tools[i] = OpenAITool{Type: "function", Function: OpenAIFunction{Name: tool.Name, Description: tool.Description, Parameters: tool.InputSchema}}
	}
	return tools
}

// OpenAIStrictTools are the tools offered, for OpenAI's strict mode
// (strict: true, every argument required, the optional ones nullable): a
// model then sends null for each argument it leaves out, which Call reads as
// left out.
func (d *Dispatcher) OpenAIStrictTools() []OpenAITool {
	tools := make([]OpenAITool, len(d.tools))
	for i, tool := range d.tools {
		parameters := toolCatalogue().strictSchemas[tool.Name]
		tools[i] = OpenAITool{Type: "function", Function: OpenAIFunction{Name: tool.Name, Description: tool.Description, Parameters: parameters, Strict: true}}
	}
	return tools
}

// ApplyPatchOperations is for the OpenAI Responses API's built-in
// apply_patch tool (tools: [{"type": "apply_patch"}]): the operations of a
// response's apply_patch_call items (a slice of maps, or their JSON text)
// applied together, as one apply_patch (all or nothing). create_file and
// update_file carry their diff in apply_patch's hunk format, delete_file
// none. The text is the apply_patch_call_output's output; IsError means its
// status "failed".
func (d *Dispatcher) ApplyPatchOperations(ctx context.Context, operations any) (ToolResult, error) {
	patch, ok := patchOfOperations(operations)
	if !ok {
		return failure("INVALID_ARGUMENT", "invalid apply_patch operations: each is {type: create_file or update_file, path, diff} or {type: delete_file, path}"), nil
	}
	return d.Call(ctx, "apply_patch", map[string]any{"patch": patch})
}

// patchOfOperations is the Responses API's apply_patch operations as one
// patch in apply_patch's format; false when they are not well formed.
func patchOfOperations(operations any) (string, bool) {
	text, isText := operations.(string)
	if !isText {
		encoded, err := json.Marshal(operations)
		if err != nil {
			return "", false
		}
		text = string(encoded)
	}
	var ops []struct {
		Type string  `json:"type"`
		Path *string `json:"path"`
		Diff *string `json:"diff"`
	}
	if json.Unmarshal([]byte(text), &ops) != nil || len(ops) == 0 {
		return "", false
	}
	sections := []string{"*** Begin Patch"}
	for _, op := range ops {
		switch {
		case op.Path == nil:
			return "", false
		case op.Type == "delete_file":
			sections = append(sections, "*** Delete File: "+*op.Path)
		case (op.Type == "create_file" || op.Type == "update_file") && op.Diff != nil:
			header := map[string]string{"create_file": "*** Add File: ", "update_file": "*** Update File: "}[op.Type]
			sections = append(sections, header+*op.Path)
			if *op.Diff != "" {
				sections = append(sections, strings.TrimSuffix(*op.Diff, "\n"))
			}
		default:
			return "", false
		}
	}
	return strings.Join(append(sections, "*** End Patch"), "\n") + "\n", true
}

// AnthropicTools are the tools offered, for Anthropic tool use.
func (d *Dispatcher) AnthropicTools() []AnthropicTool {
	tools := make([]AnthropicTool, len(d.tools))
	for i, tool := range d.tools {
		tools[i] = AnthropicTool{Name: tool.Name, Description: tool.Description, InputSchema: tool.InputSchema}
	}
	return tools
}

// Call calls tool name with args: the arguments' JSON text (a string, []byte
// or json.RawMessage, as model APIs deliver it; "" is {}), or a value that
// encodes to a JSON object (a map, a struct; nil is {}). Bad arguments,
// unknown tools and failed calls come back as a ToolResult with IsError; the
// error is non-nil only when ctx ended the call (it is then ctx.Err()).
func (d *Dispatcher) Call(ctx context.Context, name string, args any) (ToolResult, error) {
	return d.CallWithProgress(ctx, name, args, nil)
}

// CallWithProgress is Call, telling progress (when not nil) how the bytes of
// export_archive and import_archive move.
func (d *Dispatcher) CallWithProgress(ctx context.Context, name string, args any, progress Progress) (ToolResult, error) {
	handler, known := toolHandlers[name]
	if !known || !slices.ContainsFunc(d.tools, func(tool ToolDefinition) bool { return tool.Name == name }) {
		names := make([]string, len(d.tools))
		for i, tool := range d.tools {
			names[i] = tool.Name
		}
		return failure("UNKNOWN_TOOL", "there is no tool named "+jsQuote(name)+"; the tools are "+strings.Join(names, ", ")), nil
	}
	value, keys, problem := parseArguments(args)
	if problem == "" {
		schema := toolCatalogue().schemas[name]
		value = withoutNulls(schema.tree, value).(map[string]any)
		problem = schema.check(value, keys)
	}
	if problem != "" {
		return failure("INVALID_ARGUMENT", "invalid arguments for "+name+": "+problem), nil
	}
	result, err := handler(d, ctx, call{arguments(value), progress})
	if err != nil {
		if ctx.Err() != nil {
			return ToolResult{}, ctx.Err()
		}
		return errorResult(name, err), nil
	}
	return result, nil
}

// call is what a handler gets: the arguments, and the progress callback of
// the tools that move bytes.
type call struct {
	arguments
	progress Progress
}

// toolHandlers are the tools this client can call, by name.
var toolHandlers = map[string]func(*Dispatcher, context.Context, call) (ToolResult, error){
	"read":           (*Dispatcher).read,
	"write":          (*Dispatcher).write,
	"edit":           (*Dispatcher).edit,
	"apply_patch":    (*Dispatcher).applyPatch,
	"delete":         (*Dispatcher).remove,
	"move":           (*Dispatcher).move,
	"make_dir":       (*Dispatcher).makeDir,
	"list":           (*Dispatcher).list,
	"search":         (*Dispatcher).search,
	"stat":           (*Dispatcher).stat,
	"changes":        (*Dispatcher).changes,
	"list_snapshots": (*Dispatcher).listSnapshots,
	"export_archive": (*Dispatcher).exportArchive,
	"import_archive": (*Dispatcher).importArchive,
}

func (d *Dispatcher) read(ctx context.Context, a call) (ToolResult, error) {
	opts := ReadOptions{MaxBytes: readMaxBytes, AtSnapshot: a.str("at_snapshot")}
	_, tail := a.arguments["tail"]
	if tail {
		opts.Tail = a.integer("tail", 0)
	} else {
		opts.StartLine, opts.LineCount = a.integer("start_line", 1), a.integer("line_count", defaultReadLines)
	}
	window, err := d.client.ReadText(ctx, d.workspace, a.str("path"), opts)
	// An image or a PDF: the daemon's Read names its media type, and ReadMedia reads it.
	var binary *Error
	if errors.As(err, &binary) && binary.Reason == ReasonBinaryFile && binary.Metadata["media_type"] != "" {
		return d.readMedia(ctx, a, binary.Metadata["media_type"])
	}
	if err != nil {
		return ToolResult{}, err
	}
	w := readWindow{
		path: window.File.GetPath(), version: window.Version, text: window.Text,
		firstLine: window.FirstLine, lastLine: window.LastLine, totalLines: window.TotalLines,
		nextStartLine: window.NextLine, eof: window.EOF, lineCut: window.LineCut,
	}
	if w.firstLine == 0 { // no line returned: the window sits where it was asked for (a tail: after the last line)
		w.firstLine = opts.StartLine
		if tail {
			w.firstLine = max(w.totalLines, 0) + 1
		}
		w.lastLine = w.firstLine - 1
	}
	return ok(readText(w, readMaxBytes), map[string]any{
		"path": w.path, "first_line": w.firstLine, "last_line": w.lastLine,
		"total_lines": unlessNegative(w.totalLines), "next_start_line": unlessZero(w.nextStartLine),
		"eof": w.eof, "version": w.version, "text": w.text,
	}), nil
}

var writeModes = map[string]WriteMode{
	"create_or_replace": WriteCreateOrReplace,
	"create_only":       WriteCreateOnly,
	"replace_only":      WriteReplaceOnly,
	"append":            WriteAppend,
}

func (d *Dispatcher) write(ctx context.Context, a call) (ToolResult, error) {
	mode := WriteCreateOrReplace
	if name, given := a.arguments["mode"]; given {
		mode = writeModes[name.(string)]
	}
	resp, err := d.client.WriteText(ctx, d.workspace, a.str("path"), a.str("content"), WriteOptions{Mode: mode, IfVersion: a.str("if_version")})
	if err != nil {
		return ToolResult{}, err
	}
	appended := mode == WriteAppend && !resp.GetCreated()
	return ok(writeText(resp.GetPath(), resp.GetSize(), resp.GetCreated(), appended, resp.GetVersion()), map[string]any{
		"path": resp.GetPath(), "size": resp.GetSize(), "created": resp.GetCreated(), "version": resp.GetVersion(), "sha256": resp.GetSha256(),
	}), nil
}

func (d *Dispatcher) edit(ctx context.Context, a call) (ToolResult, error) {
	var edits []TextEdit
	for _, e := range a.arguments["edits"].([]any) {
		e := arguments(e.(map[string]any))
		edits = append(edits, TextEdit{Old: e.str("old_text"), New: e.str("new_text"), ReplaceAll: e.boolean("replace_all")})
	}
	dryRun := a.boolean("dry_run")
	resp, err := d.client.Edit(ctx, d.workspace, a.str("path"), edits, EditOptions{DryRun: dryRun, IfVersion: a.str("if_version")})
	if err != nil {
		return ToolResult{}, err
	}
	return ok(editText(resp.GetPath(), resp.GetReplacements(), resp.GetDiff(), resp.GetDiffTruncated(), dryRun, resp.GetVersion()), map[string]any{
		"path": resp.GetPath(), "replacements": resp.GetReplacements(), "diff": resp.GetDiff(), "diff_truncated": resp.GetDiffTruncated(),
		"dry_run": dryRun, "version": resp.GetVersion(),
	}), nil
}

var patchActions = map[filetoolsv1.PatchAction]string{
	filetoolsv1.PatchAction_PATCH_ACTION_ADDED:   "added",
	filetoolsv1.PatchAction_PATCH_ACTION_UPDATED: "updated",
	filetoolsv1.PatchAction_PATCH_ACTION_DELETED: "deleted",
	filetoolsv1.PatchAction_PATCH_ACTION_MOVED:   "moved",
}

func (d *Dispatcher) applyPatch(ctx context.Context, a call) (ToolResult, error) {
	dryRun := a.boolean("dry_run")
	resp, err := d.client.ApplyPatch(ctx, d.workspace, a.str("patch"), dryRun)
	if err != nil {
		return ToolResult{}, err
	}
	files := make([]patchedFile, len(resp.GetFiles()))
	structured := make([]any, len(resp.GetFiles()))
	for i, f := range resp.GetFiles() {
		action, known := patchActions[f.GetAction()]
		if !known {
			action = "updated"
		}
		files[i] = patchedFile{path: f.GetPath(), action: action, movedFrom: f.GetMovedFrom()}
		structured[i] = map[string]any{"path": f.GetPath(), "action": action, "moved_from": f.GetMovedFrom(), "version": f.GetVersion()}
	}
	return ok(patchText(files, dryRun), map[string]any{"files": structured, "dry_run": dryRun}), nil
}

// remove, move and makeDir call the stubs themselves: the texts name the
// paths as the daemon wrote them back, which Delete, Move and MakeDir do not
// return.
func (d *Dispatcher) remove(ctx context.Context, a call) (ToolResult, error) {
	resp, err := unary(ctx, d.client.files.Delete, &filetoolsv1.DeleteRequest{
		Workspace: d.workspace, Path: a.str("path"), Recursive: a.boolean("recursive"), IfVersion: a.str("if_version"),
	})
	if err != nil {
		return ToolResult{}, err
	}
	return ok(deleteText(resp.GetPath(), resp.GetExisted()), map[string]any{"path": resp.GetPath(), "existed": resp.GetExisted()}), nil
}

func (d *Dispatcher) move(ctx context.Context, a call) (ToolResult, error) {
	resp, err := unary(ctx, d.client.files.Move, &filetoolsv1.MoveRequest{
		Workspace: d.workspace, Source: a.str("source"), Destination: a.str("destination"),
		Overwrite: a.boolean("overwrite"), IfVersion: a.str("if_version"),
	})
	if err != nil {
		return ToolResult{}, err
	}
	return ok(moveText(resp.GetSource(), resp.GetDestination()), map[string]any{
		"source": resp.GetSource(), "destination": resp.GetDestination(), "version": resp.GetFile().GetVersion(),
	}), nil
}

func (d *Dispatcher) makeDir(ctx context.Context, a call) (ToolResult, error) {
	resp, err := unary(ctx, d.client.files.MakeDir, &filetoolsv1.MakeDirRequest{Workspace: d.workspace, Path: a.str("path")})
	if err != nil {
		return ToolResult{}, err
	}
	return ok(makeDirText(resp.GetPath(), resp.GetCreated()), map[string]any{"path": resp.GetPath(), "created": resp.GetCreated()}), nil
}

func (d *Dispatcher) list(ctx context.Context, a call) (ToolResult, error) {
	var summary ListSummary
	opts := ListOptions{
		Pattern:        a.str("pattern"),
		Recursive:      a.boolean("recursive"),
		MaxDepth:       int32(a.integer("max_depth", 0)),
		SkipHidden:     a.isFalse("include_hidden"),
		IncludeIgnored: a.isFalse("respect_gitignore"),
		MaxEntries:     int32(a.integer("max_entries", defaultListEntries)),
		AtSnapshot:     a.str("at_snapshot"),
		Summary:        &summary,
	}
	var entries []*FileInfo
	for entry, err := range d.client.List(ctx, d.workspace, a.strOr("path", "/"), opts) {
		if err != nil {
			return ToolResult{}, err
		}
		entries = append(entries, entry)
	}
	structured := make([]map[string]any, len(entries))
	for i, e := range entries {
		structured[i] = map[string]any{"path": e.GetPath(), "type": fileTypeName(e.GetType()), "size": e.GetSize(), "version": e.GetVersion()}
	}
	return ok(listText(entries, summary.Truncated), map[string]any{"entries": structured, "truncated": summary.Truncated}), nil
}

func (d *Dispatcher) search(ctx context.Context, a call) (ToolResult, error) {
	var summary SearchSummary
	lines := int32(a.integer("context", 0)) // of context, before and after each match
	opts := SearchOptions{
		Path:            a.strOr("path", "/"),
		FixedStrings:    a.boolean("fixed_strings"),
		CaseInsensitive: a.boolean("case_insensitive"),
		Include:         a.strings("include"),
		Exclude:         a.strings("exclude"),
		ContextBefore:   lines,
		ContextAfter:    lines,
		MaxResults:      int32(a.integer("max_results", 0)),
		// The first page soonest unless the model asks for a stable one (catalogue: search's "order").
		Order:   OrderFound,
		Summary: &summary,
	}
	if a.strOr("order", "found") == "path" {
		opts.Order = OrderPath
	}
	pattern := a.str("pattern")
	switch a.strOr("output_mode", "content") {
	case "files_with_matches":
		paths, err := collect(d.client.SearchFiles(ctx, d.workspace, pattern, opts))
		if err != nil {
			return ToolResult{}, err
		}
		return ok(searchFilesText(paths, summary, opts.Order), withSummary(map[string]any{"files": paths}, summary)), nil
	case "count":
		counts, err := collect(d.client.SearchCounts(ctx, d.workspace, pattern, opts))
		if err != nil {
			return ToolResult{}, err
		}
		structured := make([]map[string]any, len(counts))
		for i, c := range counts {
			structured[i] = map[string]any{"path": c.GetPath(), "count": c.GetCount()}
		}
		return ok(searchCountsText(counts, summary, opts.Order), withSummary(map[string]any{"counts": structured}, summary)), nil
	}
	hits, err := collect(d.client.Search(ctx, d.workspace, pattern, opts))
	if err != nil {
		return ToolResult{}, err
	}
	structured := make([]map[string]any, len(hits))
	for i, h := range hits {
		structured[i] = map[string]any{"path": h.GetPath(), "line_number": h.GetLineNumber(), "line": h.GetLine(), "before": nonNil(h.GetBefore()), "after": nonNil(h.GetAfter())}
	}
	return ok(searchMatchesText(hits, summary, lines > 0, opts.Order), withSummary(map[string]any{"matches": structured}, summary)), nil
}

func (d *Dispatcher) stat(ctx context.Context, a call) (ToolResult, error) {
	file, err := d.client.Stat(ctx, d.workspace, a.strOr("path", "/"), StatOptions{CountLines: a.boolean("count_lines"), AtSnapshot: a.str("at_snapshot")})
	if err != nil {
		return ToolResult{}, err
	}
	var lineCount any
	if file.LineCount != nil {
		lineCount = file.GetLineCount()
	}
	return ok(statText(file), map[string]any{
		"path": file.GetPath(), "type": fileTypeName(file.GetType()), "size": file.GetSize(),
		"mode": int64(file.GetMode()), "version": file.GetVersion(), "line_count": lineCount,
	}), nil
}

func (d *Dispatcher) changes(ctx context.Context, a call) (ToolResult, error) {
	entries, summary, err := d.liveChanges(ctx, a.str("since"))
	if err != nil {
		return ToolResult{}, err
	}
	shown := entries[:min(len(entries), int(a.integer("max_entries", defaultListEntries)))]
	structured := make([]map[string]any, len(shown))
	for i, e := range shown {
		removed := e.GetKind() == filetoolsv1.DiffKind_DIFF_KIND_REMOVED
		side := e.GetTypeAfter()
		if removed {
			side = e.GetTypeBefore()
		}
		kind := "file"
		if side == filetoolsv1.DiffEntryType_DIFF_ENTRY_TYPE_SYMLINK {
			kind = "symlink"
		}
		structured[i] = map[string]any{"path": e.GetPath(), "kind": diffKindName(e.GetKind()), "type": kind, "size_before": e.GetSizeBefore(), "size_after": e.GetSizeAfter()}
	}
	return ok(changesText(shown, summary), map[string]any{
		"since": summary.From, "changes": structured, "added": summary.Added, "modified": summary.Modified,
		"removed": summary.Removed, "unchanged": summary.Unchanged, "truncated": len(shown) < len(entries),
	}), nil
}

// liveChanges is what changed from snapshot since ("" = the newest) to the
// live tree. With no snapshot yet (a workspace whose first run has not
// finished), every file and link of the live tree is new: reported as added,
// with summary.From "" (the daemon's DiffSnapshots says NOT_FOUND there).
func (d *Dispatcher) liveChanges(ctx context.Context, since string) ([]*DiffEntry, DiffSummary, error) {
	var summary DiffSummary
	entries, err := collect(d.client.DiffSnapshots(ctx, d.workspace, since, DiffOptions{Summary: &summary}))
	if since != "" || !errors.Is(err, ErrNotFound) {
		return entries, summary, err
	}
	files, err := collect(d.client.List(ctx, d.workspace, "/", ListOptions{Recursive: true, IncludeIgnored: true, MaxEntries: listMaxEntries}))
	if err != nil {
		return nil, DiffSummary{}, err
	}
	entries = nil
	for _, f := range files {
		if f.GetType() != filetoolsv1.FileType_FILE_TYPE_FILE && f.GetType() != filetoolsv1.FileType_FILE_TYPE_SYMLINK {
			continue
		}
		side := filetoolsv1.DiffEntryType_DIFF_ENTRY_TYPE_FILE
		if f.GetType() == filetoolsv1.FileType_FILE_TYPE_SYMLINK {
			side = filetoolsv1.DiffEntryType_DIFF_ENTRY_TYPE_SYMLINK
		}
		entries = append(entries, &DiffEntry{Path: f.GetPath(), Kind: filetoolsv1.DiffKind_DIFF_KIND_ADDED, TypeAfter: side, SizeAfter: f.GetSize()})
	}
	return entries, DiffSummary{Added: int64(len(entries))}, nil
}

func diffKindName(k filetoolsv1.DiffKind) string {
	switch k {
	case filetoolsv1.DiffKind_DIFF_KIND_ADDED:
		return "added"
	case filetoolsv1.DiffKind_DIFF_KIND_REMOVED:
		return "removed"
	default:
		return "modified"
	}
}

func (d *Dispatcher) listSnapshots(ctx context.Context, _ call) (ToolResult, error) {
	snapshots, err := d.client.ListSnapshots(ctx, d.workspace)
	if err != nil {
		return ToolResult{}, err
	}
	structured := make([]map[string]any, len(snapshots))
	for i, s := range snapshots {
		labels := s.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		structured[i] = map[string]any{
			"id": s.GetId(), "created_at": isoTime(s.GetCreatedAt()), "run_id": s.GetRunId(),
			"file_count": s.GetFileCount(), "size_bytes": s.GetSizeBytes(), "labels": labels,
		}
	}
	return ok(snapshotsText(snapshots), map[string]any{"snapshots": structured}), nil
}

func (d *Dispatcher) exportArchive(ctx context.Context, a call) (ToolResult, error) {
	// Stat first: the daemon's include globs match nothing in a missing
	// directory, and a model should hear that, not get an empty archive.
	source, err := d.client.Stat(ctx, d.workspace, a.strOr("path", "/"), StatOptions{})
	if err != nil {
		return ToolResult{}, err
	}
	include := archiveIncludes(source.GetPath(), source.GetType() == filetoolsv1.FileType_FILE_TYPE_DIRECTORY, a.strings("include"))
	mode := WriteCreateOnly
	if a.boolean("overwrite") {
		mode = WriteCreateOrReplace
	}
	header, file, err := d.client.ExportInto(ctx, d.workspace, a.str("destination"),
		ExportOptions{Live: true, Include: include, Progress: a.progress}, UploadOptions{Mode: mode})
	if err != nil {
		return ToolResult{}, err
	}
	return ok(exportText(source.GetPath(), file.GetPath(), header.GetFileCount(), file.GetSize(), file.GetVersion()), map[string]any{
		"path": source.GetPath(), "destination": file.GetPath(), "file_count": header.GetFileCount(),
		"size": file.GetSize(), "sha256": file.GetSha256(), "version": file.GetVersion(),
	}), nil
}

var globSpecial = regexp.MustCompile(`[\\*?[\]{}()!+@]`)

// archiveIncludes are the daemon's include globs (matched against workspace
// paths without the leading "/") for a tool's path and its globs relative to
// it: the directory's name escaped, so that a "[" or "*" in it is literal.
func archiveIncludes(path string, isDirectory bool, globs []string) []string {
	base := globSpecial.ReplaceAllString(strings.TrimLeft(path, "/"), `\$0`)
	switch {
	case !isDirectory:
		return []string{base}
	case base == "":
		return globs
	case len(globs) == 0:
		return []string{base + "/**"}
	}
	prefixed := make([]string, len(globs))
	for i, glob := range globs {
		prefixed[i] = base + "/" + glob
	}
	return prefixed
}

func (d *Dispatcher) importArchive(ctx context.Context, a call) (ToolResult, error) {
	destination := a.strOr("destination", "/")
	header, imported, err := d.client.ImportFrom(ctx, d.workspace, a.str("archive"), destination, a.progress)
	if err != nil {
		return ToolResult{}, err
	}
	// The directory as the daemon names it (it exists now): "out" and "/out/" are both /out.
	dir, err := d.client.Stat(ctx, d.workspace, destination, StatOptions{})
	if err != nil {
		return ToolResult{}, err
	}
	archive := header.GetFile().GetPath()
	return ok(importText(archive, dir.GetPath(), imported.GetFileCount(), imported.GetSizeBytes()), map[string]any{
		"archive": archive, "destination": dir.GetPath(), "file_count": imported.GetFileCount(), "size_bytes": imported.GetSizeBytes(),
	}), nil
}

// collect drains a stream (none is [], not null, in the structured result).
func collect[T any](items func(yield func(T, error) bool)) ([]T, error) {
	all := []T{}
	for item, err := range items {
		if err != nil {
			return nil, err
		}
		all = append(all, item)
	}
	return all, nil
}

func ok(text string, structured map[string]any) ToolResult {
	return ToolResult{Text: text, Structured: structured}
}

// failure is a tool-level failure (no daemon call was made), in the text
// shape of a daemon error.
func failure(reason, message string) ToolResult {
	return ToolResult{
		Text:       errorText(reason, message, nil),
		IsError:    true,
		Structured: map[string]any{"error": map[string]any{"reason": reason, "message": message}},
	}
}

// errorResult is a failed call of tool to the daemon, for the model.
func errorResult(tool string, err error) ToolResult {
	var e *Error
	if !errors.As(err, &e) {
		// Not the daemon's answer (the client returns only *Error from a call, so a bug here): still a result.
		return failure("INTERNAL", "the tool failed in the client: "+err.Error())
	}
	code := codeName(e.Code)
	reason := string(e.Reason)
	if reason == "" {
		reason = code
	}
	metadata := e.Metadata
	if metadata == nil {
		metadata = map[string]string{}
	}
	message := e.Message
	if e.Reason == "" && code == "UNAVAILABLE" {
		// Not the daemon's answer but the channel's, in grpc-go's words: the catalogue's, as every client says it.
		message = toolCatalogue().Unreachable
	}
	return ToolResult{
		Text:       toolErrorText(tool, reason, message, metadata),
		IsError:    true,
		Structured: map[string]any{"error": map[string]any{"reason": reason, "code": code, "message": e.Message, "metadata": metadata}},
	}
}

// codeNames are the gRPC status codes' canonical names (as grpc-js, and so
// the TypeScript dispatcher, writes them; codes.Code.String() is CamelCase).
var codeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
	"PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
	"UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED",
}

func codeName(code codes.Code) string {
	if int(code) < len(codeNames) {
		return codeNames[code]
	}
	return strconv.FormatUint(uint64(code), 10)
}

func withSummary(fields map[string]any, s SearchSummary) map[string]any {
	fields["files_searched"], fields["files_matched"] = s.FilesSearched, s.FilesMatched
	fields["truncated"], fields["timed_out"] = s.Truncated, s.TimedOut
	return fields
}

func fileTypeName(t filetoolsv1.FileType) string {
	switch t {
	case filetoolsv1.FileType_FILE_TYPE_FILE:
		return "file"
	case filetoolsv1.FileType_FILE_TYPE_DIRECTORY:
		return "directory"
	case filetoolsv1.FileType_FILE_TYPE_SYMLINK:
		return "symlink"
	default:
		return "other"
	}
}

// unlessNegative and unlessZero are the structured result's null for "unknown"
// and "none".
func unlessNegative(n int64) any {
	if n < 0 {
		return nil
	}
	return n
}

func unlessZero(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}

// nonNil keeps an empty list a list ([]) in the structured result's JSON.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// arguments are a call's arguments once the tool's schema has accepted them
// (so each is of the type its schema says, or absent).
type arguments map[string]any

func (a arguments) str(name string) string { s, _ := a[name].(string); return s }

func (a arguments) strOr(name, otherwise string) string {
	if s, given := a[name].(string); given {
		return s
	}
	return otherwise
}

func (a arguments) boolean(name string) bool { b, _ := a[name].(bool); return b }

// isFalse: the argument was given, as false (for settings whose default is true).
func (a arguments) isFalse(name string) bool { b, given := a[name].(bool); return given && !b }

// integer is a whole number the schema accepted: every integer argument
// has a maximum (at most 2^53-1, exact in a float64).
func (a arguments) integer(name string, otherwise int64) int64 {
	if f, given := a[name].(float64); given {
		return int64(f)
	}
	return otherwise
}

func (a arguments) strings(name string) []string {
	items, _ := a[name].([]any)
	var all []string
	for _, item := range items {
		all = append(all, item.(string))
	}
	return all
}

// catalogue is the embedded catalogue, parsed, with each tool's schema
// compiled.
type catalogue struct {
	Tools      []ToolDefinition
	ErrorHints map[string][]string
	// What a call that never reached the daemon says, in every language.
	Unreachable string
	schemas     map[string]*toolSchema
	// Each tool's argument schema in OpenAI's strict mode, by tool.
	strictSchemas map[string]json.RawMessage
	toolHints     map[string]map[string][]string // each tool's own error hints, by tool and reason
}

// toolCatalogue parses the embedded catalogue once. It panics if the
// catalogue is broken: it is part of the module, checked by its tests.
var toolCatalogue = sync.OnceValue(func() *catalogue {
	var file struct {
		Tools       []ToolDefinition           `json:"tools"`
		ErrorHints  map[string]json.RawMessage `json:"error_hints"`
		Unreachable struct {
			Message string `json:"message"`
		} `json:"unreachable"`
	}
	if err := json.Unmarshal(catalogueJSON, &file); err != nil {
		panic(fmt.Sprintf("filetools: the embedded tool catalogue: %v", err))
	}
	c := &catalogue{Tools: file.Tools, ErrorHints: map[string][]string{}, Unreachable: file.Unreachable.Message, schemas: map[string]*toolSchema{}, toolHints: map[string]map[string][]string{}}
	if err := json.Unmarshal(strictSchemasJSON, &c.strictSchemas); err != nil {
		panic(fmt.Sprintf("filetools: the embedded strict schemas: %v", err))
	}
	for reason, raw := range file.ErrorHints {
		if strings.HasPrefix(reason, "$") { // "$comment"
			continue
		}
		var sentences []string
		if err := json.Unmarshal(raw, &sentences); err != nil {
			panic(fmt.Sprintf("filetools: the embedded tool catalogue: error_hints.%s: %v", reason, err))
		}
		c.ErrorHints[reason] = sentences
	}
	for _, tool := range c.Tools {
		schema, err := compileSchema(tool.Name, tool.InputSchema)
		if err != nil {
			panic(fmt.Sprintf("filetools: the embedded tool catalogue: the schema of %s: %v", tool.Name, err))
		}
		c.schemas[tool.Name] = schema
		c.toolHints[tool.Name] = tool.ErrorHints
	}
	return c
})

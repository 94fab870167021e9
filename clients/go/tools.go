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
}

// DispatcherOptions for NewDispatcher.
type DispatcherOptions struct {
	// Offer only the tools that change nothing (read, list, search, stat).
	ReadOnly bool
}

// Lines a read returns unless told otherwise, and the text it may carry: a
// window a model can take in. Entries a list returns unless told otherwise.
const (
	defaultReadLines   = 2000
	readMaxBytes       = 100_000
	defaultListEntries = 1000
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
		problem = toolCatalogue().schemas[name].check(value, keys)
	}
	if problem != "" {
		return failure("INVALID_ARGUMENT", "invalid arguments for "+name+": "+problem), nil
	}
	result, err := handler(d, ctx, arguments(value))
	if err != nil {
		if ctx.Err() != nil {
			return ToolResult{}, ctx.Err()
		}
		return errorResult(err), nil
	}
	return result, nil
}

// toolHandlers are the tools this client can call, by name.
var toolHandlers = map[string]func(*Dispatcher, context.Context, arguments) (ToolResult, error){
	"read":     (*Dispatcher).read,
	"write":    (*Dispatcher).write,
	"edit":     (*Dispatcher).edit,
	"delete":   (*Dispatcher).remove,
	"move":     (*Dispatcher).move,
	"make_dir": (*Dispatcher).makeDir,
	"list":     (*Dispatcher).list,
	"search":   (*Dispatcher).search,
	"stat":     (*Dispatcher).stat,
}

func (d *Dispatcher) read(ctx context.Context, a arguments) (ToolResult, error) {
	opts := ReadOptions{MaxBytes: readMaxBytes}
	_, tail := a["tail"]
	if tail {
		opts.Tail = a.integer("tail", 0)
	} else {
		opts.StartLine, opts.LineCount = a.integer("start_line", 1), a.integer("line_count", defaultReadLines)
	}
	window, err := d.client.ReadText(ctx, d.workspace, a.str("path"), opts)
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

func (d *Dispatcher) write(ctx context.Context, a arguments) (ToolResult, error) {
	mode := WriteCreateOrReplace
	if name, given := a["mode"]; given {
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

func (d *Dispatcher) edit(ctx context.Context, a arguments) (ToolResult, error) {
	var edits []TextEdit
	for _, e := range a["edits"].([]any) {
		e := arguments(e.(map[string]any))
		edits = append(edits, TextEdit{Old: e.str("old_text"), New: e.str("new_text"), ReplaceAll: e.boolean("replace_all")})
	}
	dryRun := a.boolean("dry_run")
	resp, err := d.client.Edit(ctx, d.workspace, a.str("path"), edits, EditOptions{DryRun: dryRun, IfVersion: a.str("if_version")})
	if err != nil {
		return ToolResult{}, err
	}
	return ok(editText(resp.GetPath(), resp.GetReplacements(), resp.GetDiff(), dryRun, resp.GetVersion()), map[string]any{
		"path": resp.GetPath(), "replacements": resp.GetReplacements(), "diff": resp.GetDiff(), "dry_run": dryRun, "version": resp.GetVersion(),
	}), nil
}

// remove, move and makeDir call the stubs themselves: the texts name the
// paths as the daemon wrote them back, which Delete, Move and MakeDir do not
// return.
func (d *Dispatcher) remove(ctx context.Context, a arguments) (ToolResult, error) {
	resp, err := unary(ctx, d.client.files.Delete, &filetoolsv1.DeleteRequest{
		Workspace: d.workspace, Path: a.str("path"), Recursive: a.boolean("recursive"), IfVersion: a.str("if_version"),
	})
	if err != nil {
		return ToolResult{}, err
	}
	return ok(deleteText(resp.GetPath(), resp.GetExisted()), map[string]any{"path": resp.GetPath(), "existed": resp.GetExisted()}), nil
}

func (d *Dispatcher) move(ctx context.Context, a arguments) (ToolResult, error) {
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

func (d *Dispatcher) makeDir(ctx context.Context, a arguments) (ToolResult, error) {
	resp, err := unary(ctx, d.client.files.MakeDir, &filetoolsv1.MakeDirRequest{Workspace: d.workspace, Path: a.str("path")})
	if err != nil {
		return ToolResult{}, err
	}
	return ok(makeDirText(resp.GetPath(), resp.GetCreated()), map[string]any{"path": resp.GetPath(), "created": resp.GetCreated()}), nil
}

func (d *Dispatcher) list(ctx context.Context, a arguments) (ToolResult, error) {
	var summary ListSummary
	opts := ListOptions{
		Pattern:        a.str("pattern"),
		Recursive:      a.boolean("recursive"),
		MaxDepth:       int32(a.integer("max_depth", 0)),
		SkipHidden:     a.isFalse("include_hidden"),
		IncludeIgnored: a.isFalse("respect_gitignore"),
		MaxEntries:     int32(a.integer("max_entries", defaultListEntries)),
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

func (d *Dispatcher) search(ctx context.Context, a arguments) (ToolResult, error) {
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
		Summary:         &summary,
	}
	pattern := a.str("pattern")
	switch a.strOr("output_mode", "content") {
	case "files_with_matches":
		paths, err := collect(d.client.SearchFiles(ctx, d.workspace, pattern, opts))
		if err != nil {
			return ToolResult{}, err
		}
		return ok(searchFilesText(paths, summary), withSummary(map[string]any{"files": paths}, summary)), nil
	case "count":
		counts, err := collect(d.client.SearchCounts(ctx, d.workspace, pattern, opts))
		if err != nil {
			return ToolResult{}, err
		}
		structured := make([]map[string]any, len(counts))
		for i, c := range counts {
			structured[i] = map[string]any{"path": c.GetPath(), "count": c.GetCount()}
		}
		return ok(searchCountsText(counts, summary), withSummary(map[string]any{"counts": structured}, summary)), nil
	}
	hits, err := collect(d.client.Search(ctx, d.workspace, pattern, opts))
	if err != nil {
		return ToolResult{}, err
	}
	structured := make([]map[string]any, len(hits))
	for i, h := range hits {
		structured[i] = map[string]any{"path": h.GetPath(), "line_number": h.GetLineNumber(), "line": h.GetLine(), "before": nonNil(h.GetBefore()), "after": nonNil(h.GetAfter())}
	}
	return ok(searchMatchesText(hits, summary, lines > 0), withSummary(map[string]any{"matches": structured}, summary)), nil
}

func (d *Dispatcher) stat(ctx context.Context, a arguments) (ToolResult, error) {
	file, err := d.client.Stat(ctx, d.workspace, a.strOr("path", "/"), StatOptions{CountLines: a.boolean("count_lines")})
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

// errorResult is a failed call to the daemon, for the model.
func errorResult(err error) ToolResult {
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
	return ToolResult{
		Text:       errorText(reason, e.Message, metadata),
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
	schemas    map[string]*toolSchema
}

// toolCatalogue parses the embedded catalogue once. It panics if the
// catalogue is broken: it is part of the module, checked by its tests.
var toolCatalogue = sync.OnceValue(func() *catalogue {
	var file struct {
		Tools      []ToolDefinition           `json:"tools"`
		ErrorHints map[string]json.RawMessage `json:"error_hints"`
	}
	if err := json.Unmarshal(catalogueJSON, &file); err != nil {
		panic(fmt.Sprintf("filetools: the embedded tool catalogue: %v", err))
	}
	c := &catalogue{Tools: file.Tools, ErrorHints: map[string][]string{}, schemas: map[string]*toolSchema{}}
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
	}
	return c
})

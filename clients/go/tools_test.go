package filetools_test

// The tool dispatcher against a real filetoolsd: the definitions are the
// catalogue's, each tool's text is what catalogue/README.md specifies (the
// conformance table the TypeScript and Python tests run too), errors come
// back as text a model can act on, and nothing a model sends fails Call.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"testing"

	filetools "github.com/filetools/filetools/clients/go"
	"google.golang.org/grpc/codes"
)

type conformanceCall struct {
	Tool    string            `json:"tool"`
	Args    json.RawMessage   `json:"args"`
	Text    *string           `json:"text"`
	Pattern *string           `json:"pattern"`
	IsError bool              `json:"is_error"`
	Save    map[string]string `json:"save"`
	Images  []struct {
		MIMEType string `json:"mime_type"`
	} `json:"images"`
}

type conformanceTable struct {
	Files    map[string]json.RawMessage `json:"files"`
	Snapshot bool                       `json:"snapshot"`
	Calls    []conformanceCall          `json:"calls"`
	Media    struct {
		Files map[string]struct {
			Base64 string `json:"base64"`
		} `json:"files"`
		Calls []conformanceCall `json:"calls"`
	} `json:"media"`
}

func TestToolConformanceTable(t *testing.T) {
	table, client, ctx := conformanceSetup(t)
	if _, err := client.CreateWorkspace(ctx, "conformance"); err != nil {
		t.Fatal(err)
	}
	for path, content := range table.Files {
		if _, err := client.WriteText(ctx, "conformance", path, fileContent(t, content), filetools.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if table.Snapshot {
		run, err := client.StartRun(ctx, "conformance", filetools.StartRunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.FinishRun(ctx, "conformance", run.GetId(), filetools.FinishRunOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tools := filetools.NewDispatcher(client, "conformance", filetools.DispatcherOptions{})
	saved := map[string]any{}
	for i, call := range table.Calls {
		t.Run(fmt.Sprintf("%d %s %s", i, call.Tool, call.Args), func(t *testing.T) {
			result, err := tools.Call(ctx, call.Tool, substitute(t, call.Args, saved))
			if err != nil {
				t.Fatalf("Call returned an error: %v", err)
			}
			checkConforming(t, result, call)
			for name, field := range call.Save {
				saved[name] = result.Structured[field]
			}
		})
	}
}

// conformanceSetup reads catalogue/conformance.json and starts a daemon with a client on it.
func conformanceSetup(t *testing.T) (conformanceTable, *filetools.Client, context.Context) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "catalogue", "conformance.json"))
	if err != nil {
		t.Fatal(err)
	}
	var table conformanceTable
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	return table, startDaemon(t).client(t), testContext(t)
}

// TestToolConformanceMedia runs the table's reads of images and PDFs (its
// media part) on a second fresh workspace: the same texts, and the image
// content blocks, each decoding as the type it names.
func TestToolConformanceMedia(t *testing.T) {
	table, client, ctx := conformanceSetup(t)
	if _, err := client.CreateWorkspace(ctx, "conformance-media"); err != nil {
		t.Fatal(err)
	}
	for path, file := range table.Media.Files {
		data, err := base64.StdEncoding.DecodeString(file.Base64)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := client.WriteBytes(ctx, "conformance-media", path, data, filetools.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tools := filetools.NewDispatcher(client, "conformance-media", filetools.DispatcherOptions{})
	for i, call := range table.Media.Calls {
		t.Run(fmt.Sprintf("%d read %s", i, call.Args), func(t *testing.T) {
			result, err := tools.Call(ctx, call.Tool, call.Args)
			if err != nil {
				t.Fatalf("Call returned an error: %v", err)
			}
			checkConforming(t, result, call)
			if len(result.Images) != len(call.Images) {
				t.Fatalf("images: %d, want %d", len(result.Images), len(call.Images))
			}
			for j, image := range result.Images {
				data, err := base64.StdEncoding.DecodeString(image.Data)
				if err != nil || image.MIMEType != call.Images[j].MIMEType || http.DetectContentType(data) != image.MIMEType {
					t.Errorf("image %d: %s (its bytes look like %s), want %s", j, image.MIMEType, http.DetectContentType(data), call.Images[j].MIMEType)
				}
			}
		})
	}
	t.Run("in Anthropic's and OpenAI's shapes", func(t *testing.T) {
		result, err := tools.Call(ctx, "read", map[string]any{"path": "/img/dot.png"})
		if err != nil {
			t.Fatal(err)
		}
		text, data := "Image /img/dot.png (PNG, 4x3 pixels, 95 bytes).\n", result.Images[0].Data
		anthropic, _ := json.Marshal(result.AnthropicContent())
		openai, _ := json.Marshal(result.OpenAIOutput())
		wantAnthropic, _ := json.Marshal([]any{map[string]any{"type": "text", "text": text}, map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": data}}})
		wantOpenAI, _ := json.Marshal([]any{map[string]any{"type": "input_text", "text": text}, map[string]any{"type": "input_image", "image_url": "data:image/png;base64," + data}})
		if string(anthropic) != string(wantAnthropic) || string(openai) != string(wantOpenAI) {
			t.Errorf("anthropic %s\nopenai %s", anthropic, openai)
		}
		plain, _ := tools.Call(ctx, "read", map[string]any{"path": "/doc.pdf", "start_line": 3})
		if plain.AnthropicContent() != plain.Text || plain.OpenAIOutput() != plain.Text {
			t.Error("a result without an image is its text")
		}
	})
	t.Run("ReadMedia and its errors", func(t *testing.T) {
		read, err := client.ReadMedia(ctx, "conformance-media", "/doc.pdf", filetools.ReadMediaOptions{StartPage: 2, PageCount: 1})
		if err != nil || read.PageCount != 3 || len(read.Pages) != 1 || read.Pages[0].Number != 2 || read.NextPage != 3 || read.EOF {
			t.Fatalf("%+v %v", read, err)
		}
		_, err = client.ReadMedia(ctx, "conformance-media", "/cut.pdf", filetools.ReadMediaOptions{})
		if !errors.Is(err, filetools.ErrMediaUnreadable) {
			t.Errorf("cut.pdf: %v", err)
		}
		_, err = client.ReadMedia(ctx, "conformance-media", "/nope.pdf", filetools.ReadMediaOptions{})
		if !errors.Is(err, filetools.ErrNotFound) {
			t.Errorf("nope.pdf: %v", err)
		}
	})
}

func checkConforming(t *testing.T, result filetools.ToolResult, call conformanceCall) {
	t.Helper()
	switch {
	case call.Text != nil:
		if result.Text != *call.Text {
			t.Errorf("text:\n%q\nwant:\n%q", result.Text, *call.Text)
		}
	case call.Pattern != nil:
		if problem := matchWhole(*call.Pattern, result.Text); problem != "" {
			t.Errorf("%s\ntext:\n%q\npattern:\n%q", problem, result.Text, *call.Pattern)
		}
	default:
		t.Fatal("the call has neither text nor pattern")
	}
	if result.IsError != call.IsError {
		t.Errorf("IsError = %v, want %v", result.IsError, call.IsError)
	}
}

// fileContent is a file of the table: its text, or {repeat_lines, count}.
func fileContent(t *testing.T, raw json.RawMessage) string {
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text
	}
	var repeat struct {
		RepeatLines string `json:"repeat_lines"`
		Count       int    `json:"count"`
	}
	if err := json.Unmarshal(raw, &repeat); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for n := 1; n <= repeat.Count; n++ {
		b.WriteString(strings.Replace(repeat.RepeatLines, "{n}", strconv.Itoa(n), 1) + "\n")
	}
	return b.String()
}

var savedName = regexp.MustCompile(`^\$\{(\w+)\}$`)

// substitute replaces a string argument "${name}" by what an earlier call
// saved under name. The arguments go to Call as the table writes them: a
// JSON string as that string (the JSON text a model API delivers), an object
// as its JSON text (json.RawMessage), re-encoded only when something was
// substituted; null as nil.
func substitute(t *testing.T, raw json.RawMessage, saved map[string]any) any {
	var value any
	if err := json.Unmarshal(raw, &value); err != nil {
		t.Fatal(err)
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case string:
			if m := savedName.FindStringSubmatch(v); m != nil {
				changed = true
				return fmt.Sprint(saved[m[1]])
			}
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		case map[string]any:
			for k := range v {
				v[k] = walk(v[k])
			}
		}
		return v
	}
	value = walk(value)
	if s, isString := value.(string); isString {
		return s
	}
	if value == nil { // args null: no arguments object, Go's nil
		return nil
	}
	if !changed {
		return raw
	}
	encoded, err := json.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	return json.RawMessage(encoded)
}

// jsToken is one escape (\d, \1, \\) or character class ([^\n]) of a
// JavaScript pattern: what a backreference must be told apart from.
var jsToken = regexp.MustCompile(`\\.|\[(?:\\.|[^\]\\])*\]`)

// matchWhole checks text against a pattern of the table: a JavaScript
// regular expression matched against the whole text. Go's regexp has no
// backreferences, so each \N becomes a capture of its own with group N's
// sub-pattern, and the two captures must then be equal: the same check, in
// two steps. It says what failed, or "".
func matchWhole(pattern, text string) string {
	refs := 0
	stubbed := jsToken.ReplaceAllStringFunc(pattern, func(token string) string {
		if len(token) == 2 && token[1] >= '1' && token[1] <= '9' {
			refs++
			return fmt.Sprintf("(?P<backref%d_%d>)", token[1]-'0', refs)
		}
		return token
	})
	tree, err := syntax.Parse(`^(?:`+stubbed+`)$`, syntax.Perl)
	if err != nil {
		return fmt.Sprintf("the pattern does not parse: %v", err)
	}
	var groups, copies []*syntax.Regexp // the pattern's own groups in order; the backreferences' stand-ins
	var walk func(re *syntax.Regexp)
	walk = func(re *syntax.Regexp) {
		if re.Op == syntax.OpCapture {
			if strings.HasPrefix(re.Name, "backref") {
				copies = append(copies, re)
			} else {
				groups = append(groups, re)
			}
		}
		for _, sub := range re.Sub {
			walk(sub)
		}
	}
	walk(tree)
	type check struct{ group, copy *syntax.Regexp }
	var checks []check
	for _, c := range copies {
		var n, k int
		fmt.Sscanf(c.Name, "backref%d_%d", &n, &k)
		if n > len(groups) || strings.Contains(groups[n-1].Sub[0].String(), "(") {
			return fmt.Sprintf(`\%d: only a backreference to a group without groups inside is supported`, n)
		}
		c.Sub[0] = groups[n-1].Sub[0] // no captures inside: the groups keep their numbers
		checks = append(checks, check{groups[n-1], c})
	}
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return fmt.Sprintf("the pattern does not compile: %v", err)
	}
	m := re.FindStringSubmatch(text)
	if m == nil {
		return "the text does not match the pattern"
	}
	for _, c := range checks {
		if m[c.group.Cap] != m[c.copy.Cap] {
			return fmt.Sprintf("a backreference is %q where its group is %q", m[c.copy.Cap], m[c.group.Cap])
		}
	}
	return ""
}

// The calls of testdata/typescript-dispatcher.json give the texts and the
// structured results the TypeScript dispatcher gave for them.
func TestToolDispatcherAgreesWithTypeScript(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "typescript-dispatcher.json"))
	if err != nil {
		t.Fatal(err)
	}
	var table struct {
		Files map[string]string `json:"files"`
		Calls []struct {
			Tool       string          `json:"tool"`
			Args       json.RawMessage `json:"args"`
			Text       string          `json:"text"`
			IsError    bool            `json:"is_error"`
			Structured json.RawMessage `json:"structured"`
		} `json:"calls"`
	}
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "agent"); err != nil {
		t.Fatal(err)
	}
	for path, content := range table.Files {
		if _, err := client.WriteText(ctx, "agent", path, content, filetools.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tools := filetools.NewDispatcher(client, "agent", filetools.DispatcherOptions{})
	for i, call := range table.Calls {
		t.Run(fmt.Sprintf("%d %s %.80s", i, call.Tool, call.Args), func(t *testing.T) {
			result, err := tools.Call(ctx, call.Tool, substitute(t, call.Args, nil))
			if err != nil {
				t.Fatalf("Call returned an error: %v", err)
			}
			if text := normalize(result.Text); text != call.Text {
				t.Errorf("text:\n%q\nwant:\n%q", text, call.Text)
			}
			if result.IsError != call.IsError {
				t.Errorf("IsError = %v, want %v", result.IsError, call.IsError)
			}
			if got, want := structuredJSON(t, result.Structured), structuredJSON(t, call.Structured); got != want {
				t.Errorf("structured:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

var (
	versionRE = regexp.MustCompile(`((?:[Vv]ersion|version is|if_version) )[0-9a-f]{16}\b`)
	mtimeRE   = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z`)
)

// normalize writes a text's versions VERSION and its times MTIME.
func normalize(text string) string {
	return versionRE.ReplaceAllString(mtimeRE.ReplaceAllString(text, "MTIME"), "${1}VERSION")
}

// structuredJSON is a structured result as canonical JSON (keys sorted),
// its "version" and "current_version" fields and the versions in its
// strings written VERSION.
func structuredJSON(t *testing.T, value any) string {
	t.Helper()
	encoded, err := json.Marshal(value)
	if err != nil {
		t.Fatal(err)
	}
	var decoded any
	if err := json.Unmarshal(encoded, &decoded); err != nil {
		t.Fatal(err)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if k == "version" || k == "current_version" {
					v[k] = "VERSION"
				} else {
					v[k] = walk(x)
				}
			}
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		case string:
			return normalize(v)
		}
		return v
	}
	canonical, err := json.Marshal(walk(decoded))
	if err != nil {
		t.Fatal(err)
	}
	return string(canonical)
}

func TestToolDefinitions(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "catalogue", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	// The strict schemas the TypeScript package offers, which clients/ts/test/openai-strict.test.ts checks against OpenAI's strict-mode rules.
	rawStrict, err := os.ReadFile(filepath.Join("..", "ts", "catalogue", "openai-strict.json"))
	if err != nil {
		t.Fatal(err)
	}
	var strictSchemas map[string]any
	if err := json.Unmarshal(rawStrict, &strictSchemas); err != nil {
		t.Fatal(err)
	}
	tools := filetools.NewDispatcher(nil, "agent", filetools.DispatcherOptions{})
	definitions := tools.Definitions()
	if len(definitions) != len(file.Tools) {
		t.Fatalf("%d definitions, the catalogue has %d tools", len(definitions), len(file.Tools))
	}
	for i, tool := range file.Tools {
		if got, want := structuredJSON(t, definitions[i]), structuredJSON(t, tool); got != want {
			t.Errorf("definition %d:\n%s\nthe catalogue's:\n%s", i, got, want)
		}
		if got := structuredJSON(t, tools.OpenAITools()[i]); got != structuredJSON(t, map[string]any{
			"type": "function", "function": map[string]any{"name": tool["name"], "description": tool["description"], "parameters": tool["input_schema"]},
		}) {
			t.Errorf("OpenAI tool %d: %s", i, got)
		}
		if got := structuredJSON(t, tools.OpenAIStrictTools()[i]); got != structuredJSON(t, map[string]any{
			"type": "function", "function": map[string]any{"name": tool["name"], "description": tool["description"], "parameters": strictSchemas[tool["name"].(string)], "strict": true},
		}) {
			t.Errorf("OpenAI strict tool %d: %s", i, got)
		}
		if got := structuredJSON(t, tools.AnthropicTools()[i]); got != structuredJSON(t, map[string]any{
			"name": tool["name"], "description": tool["description"], "input_schema": tool["input_schema"],
		}) {
			t.Errorf("Anthropic tool %d: %s", i, got)
		}
	}
	if got := names(definitions); got != "read write edit apply_patch delete move make_dir list search stat changes list_snapshots export_archive import_archive" {
		t.Errorf("tools: %s", got)
	}
	readOnly := filetools.NewDispatcher(nil, "agent", filetools.DispatcherOptions{ReadOnly: true})
	if got := names(readOnly.Definitions()); got != "read list search stat changes list_snapshots" {
		t.Errorf("read-only tools: %s", got)
	}
	if n := len(readOnly.OpenAITools()) + len(readOnly.AnthropicTools()); n != 12 {
		t.Errorf("read-only: %d OpenAI and Anthropic tools, want 6 + 6", n)
	}
	// A tool not offered is refused before anything reaches the daemon (there is none here).
	result, err := readOnly.Call(context.Background(), "write", map[string]any{"path": "/x", "content": "y"})
	want := "Error (UNKNOWN_TOOL): there is no tool named \"write\"; the tools are read, list, search, stat, changes, list_snapshots.\n"
	if err != nil || result.Text != want || !result.IsError {
		t.Errorf("read-only write: %+v, %v; want the text %q", result, err, want)
	}
}

func names(definitions []filetools.ToolDefinition) string {
	var all []string
	for _, d := range definitions {
		all = append(all, d.Name)
	}
	return strings.Join(all, " ")
}

// Whatever a model (or a program) hands Call, it gets a result to read back:
// no panic, no error.
func TestToolCallArgumentsOfAnyShape(t *testing.T) {
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "agent"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.WriteText(ctx, "agent", "/a.txt", "one\ntwo\n", filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	tools := filetools.NewDispatcher(client, "agent", filetools.DispatcherOptions{})
	invalid := func(problem string) string {
		return "Error (INVALID_ARGUMENT): invalid arguments for read: " + problem + ".\nFix the arguments and call the tool again.\n"
	}
	type window struct {
		Path      string `json:"path"`
		LineCount int    `json:"line_count,omitempty"`
	}
	for _, c := range []struct {
		name string
		args any
		want string
	}{
		{"a map", map[string]any{"path": "/a.txt", "line_count": 1}, "     1\tone\n… call read with start_line 2 for more\n"},
		{"a struct", window{Path: "/a.txt", LineCount: 1}, "     1\tone\n… call read with start_line 2 for more\n"},
		{"a pointer to a struct", &window{Path: "/a.txt"}, "     1\tone\n     2\ttwo\n"},
		{"JSON text as bytes", []byte(`{"path": "/a.txt", "tail": 1}`), "     2\ttwo\n"},
		{"a map with a wrong type", map[string]any{"path": 42}, invalid("path must be a string")},
		{"nil", nil, invalid("missing required argument path")},
		{"a nil map", map[string]any(nil), invalid("missing required argument path")},
		{"empty bytes", json.RawMessage{}, invalid("missing required argument path")},
		{"a list", []int{1, 2}, invalid("the arguments must be a JSON object")},
		{"a number", 7, invalid("the arguments must be a JSON object")},
		{"a value JSON cannot hold", map[string]any{"path": make(chan int)}, invalid("the arguments must be a JSON object")},
		{"two JSON values", `{"path": "/a.txt"}{}`, invalid("the arguments are not valid JSON")},
		{"nesting past any schema", strings.Repeat("[", 100000), invalid("the arguments are not valid JSON")},
		{"a deep value where a string goes", `{"path": ` + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + `}`, invalid("path must be a string")},
		{"a number beyond float64", `{"path": "/a.txt", "line_count": -1e999}`, invalid("line_count must be an integer")},
		{"a path of 4,097 characters", map[string]any{"path": strings.Repeat("é", 4097)}, invalid("path must be at most 4096 characters")},
		{"bytes that are not UTF-8 (read as U+FFFD, as JSON.parse of decoded text would)", []byte("{\"path\": \"/\xff\"}"), "Error (NOT_FOUND): /\uFFFD does not exist.\nCheck the path with list, or create the file with write.\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			result, err := tools.Call(ctx, "read", c.args)
			if err != nil {
				t.Fatalf("Call returned an error: %v", err)
			}
			if result.Text != c.want {
				t.Errorf("text:\n%q\nwant:\n%q", result.Text, c.want)
			}
			if result.IsError != strings.HasPrefix(c.want, "Error") {
				t.Errorf("IsError = %v for %q", result.IsError, result.Text)
			}
		})
	}
}

// Only the end of ctx makes Call return an error; the daemon's refusals are results.
func TestToolCallCancelled(t *testing.T) {
	client := startDaemon(t).client(t)
	tools := filetools.NewDispatcher(client, "agent", filetools.DispatcherOptions{})
	result, err := tools.Call(testContext(t), "read", `{"path": "/a.txt"}`)
	if err != nil || !result.IsError || !strings.HasPrefix(result.Text, "Error (WORKSPACE_NOT_FOUND): ") {
		t.Errorf("a read in a workspace that does not exist: %+v, %v", result, err)
	}
	ctx, cancel := context.WithCancel(testContext(t))
	cancel()
	result, err = tools.Call(ctx, "read", `{"path": "/a.txt"}`)
	if !errors.Is(err, context.Canceled) || result.Text != "" || result.IsError {
		t.Errorf("a cancelled call: %+v, %v; want the zero result and context.Canceled", result, err)
	}
}

func TestMatchWholeComparesBackreferences(t *testing.T) {
	pattern := `version is (\w+), not \w+\.\nretry with if_version \1 now\.\n`
	if problem := matchWhole(pattern, "version is ab12, not cd34.\nretry with if_version ab12 now.\n"); problem != "" {
		t.Errorf("same versions: %s", problem)
	}
	if problem := matchWhole(pattern, "version is ab12, not cd34.\nretry with if_version cd34 now.\n"); problem == "" {
		t.Error("different versions matched")
	}
	if problem := matchWhole(`a\\1`, `a\1`); problem != "" { // an escaped backslash, then 1: no backreference
		t.Errorf("a\\\\1: %s", problem)
	}
	if problem := matchWhole(`(a)`, "ab"); problem == "" {
		t.Error("a pattern matched only a part of the text")
	}
}

// A line longer than a read's 100,000 bytes is cut, and the text says so
// (the text the TypeScript dispatcher gives, too long for a table).
func TestToolReadCutsALongLine(t *testing.T) {
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "agent"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.WriteText(ctx, "agent", "/long.txt", strings.Repeat("y", 150_000)+"\nend\n", filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	result, err := filetools.NewDispatcher(client, "agent", filetools.DispatcherOptions{}).Call(ctx, "read", `{"path": "/long.txt"}`)
	want := "     1\t" + strings.Repeat("y", 100_000) + "\n(a line longer than 100,000 bytes was cut)\n… call read with start_line 2 for more\n"
	if err != nil || result.Text != want || result.Structured["text"] != strings.Repeat("y", 100_000) || result.Structured["next_start_line"] != int64(2) {
		t.Errorf("read of a long line: %v, %.200q…; structured next_start_line %v", err, result.Text, result.Structured["next_start_line"])
	}
}

func TestToolEditSaysItsDiffStopsAt1MiB(t *testing.T) {
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "agent"); err != nil {
		t.Fatal(err)
	}
	// The same call as the TypeScript and Python dispatcher tests: 100,000 lines, each changed.
	var lines strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&lines, "value %d\n", i)
	}
	if _, err := client.WriteText(ctx, "agent", "/every.txt", lines.String(), filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	result, err := filetools.NewDispatcher(client, "agent", filetools.DispatcherOptions{}).Call(ctx, "edit",
		`{"path": "/every.txt", "edits": [{"old_text": "value", "new_text": "VALUE", "replace_all": true}]}`)
	head := regexp.MustCompile(`^Edited /every\.txt: 100,000 replacements\. Version [0-9a-f]{16}\.\n\n--- a/every\.txt\n\+\+\+ b/every\.txt\n@@ -1,\d+ \+1,\d+ @@\n-value 0\n\+VALUE 0\n`)
	if err != nil || result.IsError || !head.MatchString(result.Text) || !strings.HasSuffix(result.Text, "\n(the diff stops here, at 1 MiB; the rest of the change is not shown)\n") {
		t.Fatalf("edit with a long diff: %v, %.300q … %q", err, result.Text, result.Text[max(0, len(result.Text)-120):])
	}
	if result.Structured["replacements"] != int64(100_000) || result.Structured["diff_truncated"] != true {
		t.Errorf("structured: replacements %v, diff_truncated %v", result.Structured["replacements"], result.Structured["diff_truncated"])
	}
}

// A model's tool calls, answered (compiled, not run: it needs a daemon).
func ExampleDispatcher() {
	ctx := context.Background()
	client, err := filetools.Dial(ctx, "127.0.0.1:7447")
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	tools := filetools.NewDispatcher(client, "agent", filetools.DispatcherOptions{})
	definitions, err := json.Marshal(tools.OpenAITools()) // the "tools" of a chat completion request
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d bytes of tool definitions\n", len(definitions))

	// The name and the arguments of a tool call, as the model's reply gave them.
	result, err := tools.Call(ctx, "read", `{"path": "/big.txt", "start_line": 149, "line_count": 2}`)
	if err != nil {
		log.Fatal(err) // ctx ended; everything else is a result the model reads
	}
	fmt.Print(result.Text) // sent back as the tool call's result; result.IsError says whether it failed
}

// The Responses API's built-in apply_patch: a response's operations applied
// together, in apply_patch's words; a bad or failing set changes nothing.
func TestToolApplyPatchOperations(t *testing.T) {
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "ops"); err != nil {
		t.Fatal(err)
	}
	if _, err := client.WriteText(ctx, "ops", "/keep.txt", "one\ntwo\n", filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	tools := filetools.NewDispatcher(client, "ops", filetools.DispatcherOptions{})
	applied, err := tools.ApplyPatchOperations(ctx, `[{"type":"create_file","path":"/new.txt","diff":"+hello\n"},{"type":"update_file","path":"/keep.txt","diff":"@@\n one\n-two\n+2\n"}]`)
	if want := "Applied the patch: 2 files changed.\nadded /new.txt\nupdated /keep.txt\n"; err != nil || applied.IsError || applied.Text != want {
		t.Fatalf("applied: %+v, %v; want %q", applied, err, want)
	}
	failing, err := tools.ApplyPatchOperations(ctx, []map[string]any{{"type": "delete_file", "path": "/new.txt"}, {"type": "update_file", "path": "/keep.txt", "diff": "@@\n-absent\n+x\n"}})
	if err != nil || !failing.IsError || !strings.HasPrefix(failing.Text, "Error (OLD_TEXT_NOT_FOUND): hunk 1 of /keep.txt") {
		t.Fatalf("failing: %+v, %v", failing, err)
	}
	if window, err := client.ReadText(ctx, "ops", "/new.txt", filetools.ReadOptions{}); err != nil || window.Text != "hello\n" {
		t.Fatalf("/new.txt after the failed set: %+v, %v", window, err)
	}
	for _, bad := range []any{[]any{}, "ops", `[{"type":"rename_file","path":"/a"}]`, `[{"type":"update_file","path":"/a"}]`, `[null]`, make(chan int)} {
		result, err := tools.ApplyPatchOperations(ctx, bad)
		if err != nil || !strings.HasPrefix(result.Text, "Error (INVALID_ARGUMENT): invalid apply_patch operations") {
			t.Errorf("%v: %+v, %v", bad, result, err)
		}
	}
}

// An unreachable daemon (gone after Dial, which checks it is there): the
// catalogue's words, the same in every language (not grpc-go's).
func TestToolUnreachableDaemon(t *testing.T) {
	ctx := testContext(t)
	var client *filetools.Client
	t.Run("a daemon, stopped when this subtest ends", func(t *testing.T) {
		var err error
		if client, err = filetools.Dial(ctx, startDaemon(t).address); err != nil {
			t.Fatal(err)
		}
	})
	if client == nil {
		t.Fatal("no client")
	}
	defer client.Close()
	result, err := filetools.NewDispatcher(client, "agent", filetools.DispatcherOptions{}).Call(ctx, "stat", nil)
	if want := "Error (UNAVAILABLE): the filetools daemon cannot be reached.\nIt is not running, or not at the address this client was given. Nothing was done: tell the operator, or call again once the daemon is back.\n"; err != nil || !result.IsError || result.Text != want {
		t.Fatalf("%+v, %v; want %q", result, err, want)
	}
}

// changes before any snapshot: every file is new (the daemon's DiffSnapshots
// has nothing to compare with).
func TestToolChangesBeforeAnySnapshot(t *testing.T) {
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "fresh"); err != nil {
		t.Fatal(err)
	}
	tools := filetools.NewDispatcher(client, "fresh", filetools.DispatcherOptions{})
	if result, err := tools.Call(ctx, "changes", nil); err != nil || result.Text != "No snapshot yet (one is taken when a run finishes), and no files yet.\n" {
		t.Fatalf("empty: %+v, %v", result, err)
	}
	for path, content := range map[string]string{"/a.txt": "abc", "/b/.hidden": "12"} {
		if _, err := client.WriteText(ctx, "fresh", path, content, filetools.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	result, err := tools.Call(ctx, "changes", `{"max_entries": 1}`)
	want := "No snapshot yet (one is taken when a run finishes), so every file is new: 2 added.\nadded /a.txt (3 bytes)\n… 1 more change not shown: raise max_entries\n"
	if err != nil || result.IsError || result.Text != want || result.Structured["since"] != "" || result.Structured["truncated"] != true {
		t.Fatalf("%+v, %v; want %q", result, err, want)
	}
	if result, _ := tools.Call(ctx, "changes", `{"since": "nope"}`); !strings.HasPrefix(result.Text, `Error (NOT_FOUND): snapshot "nope" does not exist`) {
		t.Errorf("an unknown since: %q", result.Text)
	}
}

func TestReadListStatAndDownloadAtASnapshot(t *testing.T) {
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	run, err := client.StartRun(ctx, "history", filetools.StartRunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.WriteText(ctx, "history", "/notes.txt", "first\nsecond\n", filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	finished, err := client.FinishRun(ctx, "history", run.GetId(), filetools.FinishRunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	snapshot := finished.GetSnapshot().GetId()
	if _, err := client.WriteText(ctx, "history", "/notes.txt", "rewritten\n", filetools.WriteOptions{}); err != nil {
		t.Fatal(err)
	}

	tools := filetools.NewDispatcher(client, "history", filetools.DispatcherOptions{})
	read, err := tools.Call(ctx, "read", `{"path": "/notes.txt", "at_snapshot": "`+snapshot+`"}`)
	if err != nil || read.Text != "     1\tfirst\n     2\tsecond\n" || !strings.HasPrefix(read.Structured["version"].(string), "snapshot:") {
		t.Errorf("read at %s: %v, %q, %v", snapshot, err, read.Text, read.Structured["version"])
	}
	live, err := tools.Call(ctx, "read", `{"path": "/notes.txt"}`)
	if err != nil || live.Text != "     1\trewritten\n" {
		t.Errorf("live read: %v, %q", err, live.Text)
	}
	listed, err := tools.Call(ctx, "list", `{"at_snapshot": "`+snapshot+`"}`)
	if err != nil || listed.Text != "/notes.txt (13 bytes)\n" {
		t.Errorf("list at %s: %v, %q", snapshot, err, listed.Text)
	}
	stat, err := tools.Call(ctx, "stat", `{"path": "/notes.txt", "count_lines": true, "at_snapshot": "`+snapshot+`"}`)
	if err != nil || stat.Structured["line_count"] != int64(2) {
		t.Errorf("stat at %s: %v, %v", snapshot, err, stat.Structured)
	}

	var bytes strings.Builder
	info, err := client.DownloadAt(ctx, "history", snapshot, "/notes.txt", &bytes)
	if err != nil || bytes.String() != "first\nsecond\n" || info.Size != 13 {
		t.Errorf("DownloadAt: %v, %q, %+v", err, bytes.String(), info)
	}
	file, err := client.Stat(ctx, "history", "/notes.txt", filetools.StatOptions{AtSnapshot: snapshot})
	if err != nil || file.GetSize() != 13 {
		t.Errorf("Stat at %s: %v, %v", snapshot, err, file)
	}
	_, err = client.Stat(ctx, "history", "/notes.txt", filetools.StatOptions{AtSnapshot: "20200101T000000000Z-00000000"})
	expectReason(t, "Stat at a snapshot the workspace does not have", err, codes.NotFound, filetools.ErrNotFound)
}

package filetools_test

// The tool dispatcher against a real filetoolsd: the definitions are the
// catalogue's, each tool's text is what catalogue/README.md specifies (the
// conformance table the TypeScript and Python tests run too), errors come
// back as text a model can act on, and nothing a model sends fails Call.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"testing"

	filetools "github.com/filetools/filetools/clients/go"
)

type conformanceCall struct {
	Tool    string            `json:"tool"`
	Args    json.RawMessage   `json:"args"`
	Text    *string           `json:"text"`
	Pattern *string           `json:"pattern"`
	IsError bool              `json:"is_error"`
	Save    map[string]string `json:"save"`
}

type conformanceTable struct {
	Files map[string]json.RawMessage `json:"files"`
	Calls []conformanceCall          `json:"calls"`
}

func TestToolConformanceTable(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "catalogue", "conformance.json"))
	if err != nil {
		t.Fatal(err)
	}
	var table conformanceTable
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	client := startDaemon(t).client(t)
	ctx := testContext(t)
	if _, err := client.CreateWorkspace(ctx, "conformance"); err != nil {
		t.Fatal(err)
	}
	for path, content := range table.Files {
		if _, err := client.WriteText(ctx, "conformance", path, fileContent(t, content), filetools.WriteOptions{}); err != nil {
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
			for name, field := range call.Save {
				saved[name] = result.Structured[field]
			}
		})
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
// substituted.
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

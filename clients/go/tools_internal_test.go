package filetools

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestEmbeddedCatalogueIsTheRepositorysFile(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "catalogue", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(catalogueJSON, want) {
		t.Error("catalogue/tools.json of the module differs from the repository's: run `npm run generate`")
	}
}

func TestCountGroupsDigitsByThree(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 9840: "9,840", 97293: "97,293", 100000: "100,000",
		1234567: "1,234,567", -1000: "-1,000", -999: "-999", math.MinInt64: "-9,223,372,036,854,775,808",
	} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}

// jsQuote writes what JSON.stringify writes.
func TestJSQuoteIsJSONStringify(t *testing.T) {
	for s, want := range map[string]string{
		"no_such_tool":       `"no_such_tool"`,
		`say "hi" \ bye`:     `"say \"hi\" \\ bye"`,
		"a\nb\tc\r\b\f":      `"a\nb\tc\r\b\f"`,
		"\x01\x1f\x7f":       `"\u0001\u001f` + "\x7f" + `"`,
		"<b>&\u2028\u2029é😀": "\"<b>&\u2028\u2029é😀\"",
	} {
		if got := jsQuote(s); got != want {
			t.Errorf("jsQuote(%q) = %s, want %s", s, got, want)
		}
	}
}

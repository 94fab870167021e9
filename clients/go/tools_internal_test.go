package filetools

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/types/known/timestamppb"
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

// isoTime writes what JavaScript's toISOString writes (the cases checked with node).
func TestISOTimeIsJavaScripts(t *testing.T) {
	for _, c := range []struct {
		seconds int64
		nanos   int32
		want    string
	}{
		{0, 123456789, "1970-01-01T00:00:00.123Z"},
		{1764756000, 500000000, "2025-12-03T10:00:00.500Z"},
		{253402300800, 0, "+010000-01-01T00:00:00.000Z"},
		{-62198755200, 999999999, "-000001-01-01T00:00:00.999Z"},
		{8640000000000, 0, "+275760-09-13T00:00:00.000Z"},
		{8640000000000, 1000000, "unknown"},
		{8640000000001, 0, "unknown"},
		{-8640000000000, 0, "-271821-04-20T00:00:00.000Z"},
		{-8640000000001, 999999999, "unknown"},
		{math.MaxInt64, 0, "unknown"},
		{math.MinInt64, 0, "unknown"},
	} {
		if got := isoTime(&timestamppb.Timestamp{Seconds: c.seconds, Nanos: c.nanos}); got != c.want {
			t.Errorf("isoTime(%d s, %d ns) = %s, want %s", c.seconds, c.nanos, got, c.want)
		}
	}
	if got := isoTime(nil); got != "unknown" {
		t.Errorf("isoTime(nil) = %s", got)
	}
}

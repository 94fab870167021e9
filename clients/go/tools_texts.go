package filetools

// What a model reads back from each tool: the texts specified in
// catalogue/README.md, which the TypeScript and Python dispatchers produce
// too, byte for byte (clients/ts/src/tools/texts.ts is the reference). Plain
// functions of the daemon's answers, no I/O.

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	filetoolsv1 "github.com/filetools/filetools/clients/go/gen/filetools/v1"
)

// count writes 9840 as "9,840": grouped by hand, so that every language
// writes the same digits.
func count(n int64) string {
	digits := strconv.FormatUint(absolute(n), 10)
	var b strings.Builder
	if n < 0 {
		b.WriteByte('-')
	}
	for i, digit := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(digit)
	}
	return b.String()
}

// absolute is |n| as a uint64 (math.MinInt64 included).
func absolute(n int64) uint64 {
	if n < 0 {
		return uint64(-(n + 1)) + 1
	}
	return uint64(n)
}

// plural is "1 line", "2 lines".
func plural(n int64, one, many string) string {
	if n == 1 {
		return count(n) + " " + one
	}
	return count(n) + " " + many
}

// readWindow is a read as the texts and the structured result see it: as
// the TypeScript ReadWindow (a window without lines sits where it was asked
// for, so LastLine is FirstLine - 1).
type readWindow struct {
	path, version, text string
	firstLine, lastLine int64
	totalLines          int64 // -1: unknown
	nextStartLine       int64 // 0: the end of the file was reached
	eof, lineCut        bool
}

// readText is a window's lines `cat -n` style, then where to go on.
func readText(w readWindow, maxBytes int64) string {
	text := numberLines(w.text, w.firstLine)
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	total := ""
	if w.totalLines >= 0 {
		total = "; " + plural(w.totalLines, "line", "lines") + " in all"
	}
	if w.text == "" {
		if w.totalLines == 0 {
			text = "(empty file)\n"
		} else {
			text = "(no lines here" + total + ")\n"
		}
	}
	if w.lineCut {
		text += "(a line longer than " + count(maxBytes) + " bytes was cut)\n"
	}
	if w.nextStartLine != 0 {
		text += "… call read with start_line " + strconv.FormatInt(w.nextStartLine, 10) + " for more" + total + "\n"
	}
	return text
}

// numberLines prefixes every line of text with its number, right-aligned in
// 6 columns as `cat -n` does, and a tab. Lines end at LF and keep their
// endings; a last line without LF stays without one.
func numberLines(text string, firstLine int64) string {
	var b strings.Builder
	for n := firstLine; text != ""; n++ {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line = text[:i+1]
		}
		fmt.Fprintf(&b, "%6d\t%s", n, line)
		text = text[len(line):]
	}
	return b.String()
}

func writeText(path string, size int64, created, appended bool, version string) string {
	what := "replaced"
	switch {
	case appended:
		what = "appended to"
	case created:
		what = "created"
	}
	return "Wrote " + path + " (" + what + "): " + plural(size, "byte", "bytes") + " now. Version " + version + ".\n"
}

// diffCut follows a diff the daemon stopped at its size limit.
const diffCut = "(the diff stops here, at 1 MiB; the rest of the change is not shown)\n"

func editText(path string, replacements int64, diff string, diffTruncated, dryRun bool, version string) string {
	head := "Edited " + path + ": " + plural(replacements, "replacement", "replacements") + ". Version " + version + ".\n"
	if dryRun {
		head = "Dry run, nothing written: " + plural(replacements, "replacement", "replacements") + " in " + path + " would make this change.\n"
	}
	text := head
	if diff != "" {
		if !strings.HasSuffix(diff, "\n") {
			diff += "\n"
		}
		text += "\n" + diff
	}
	if diffTruncated {
		text += diffCut
	}
	return text
}

func deleteText(path string, existed bool) string {
	if existed {
		return "Deleted " + path + ".\n"
	}
	return path + " did not exist; nothing was deleted.\n"
}

func moveText(source, destination string) string {
	return "Moved " + source + " to " + destination + ".\n"
}

func makeDirText(path string, created bool) string {
	if created {
		return "Created directory " + path + ".\n"
	}
	return "Directory " + path + " already exists.\n"
}

// listText is one line per entry: directories end in "/", files show their size.
func listText(entries []*FileInfo, truncated bool) string {
	if len(entries) == 0 {
		return "(no entries)\n"
	}
	var b strings.Builder
	for _, entry := range entries {
		b.WriteString(entryLine(entry) + "\n")
	}
	if truncated {
		b.WriteString("… stopped at " + plural(int64(len(entries)), "entry", "entries") + ": narrow it with pattern or max_depth, or raise max_entries\n")
	}
	return b.String()
}

func entryLine(entry *FileInfo) string {
	switch entry.GetType() {
	case filetoolsv1.FileType_FILE_TYPE_DIRECTORY:
		if entry.GetPath() == "/" {
			return "/"
		}
		return entry.GetPath() + "/"
	case filetoolsv1.FileType_FILE_TYPE_FILE:
		return entry.GetPath() + " (" + plural(entry.GetSize(), "byte", "bytes") + ")"
	case filetoolsv1.FileType_FILE_TYPE_SYMLINK:
		return entry.GetPath() + " (symbolic link)"
	default:
		return entry.GetPath() + " (special file)"
	}
}

// searchMatchesText is matches grouped by file, as `grep -n` with context:
// "12:match", "13-context", "--" between blocks of one file that do not touch.
func searchMatchesText(hits []*Match, summary SearchSummary, withContext bool, order SearchOrder) string {
	var b strings.Builder
	file, started := "", false
	var lastLine int64
	for _, hit := range hits {
		first := hit.GetLineNumber() - int64(len(hit.GetBefore()))
		if !started || hit.GetPath() != file {
			if started {
				b.WriteString("\n")
			}
			b.WriteString(hit.GetPath() + "\n")
			file, started = hit.GetPath(), true
		} else if withContext && first > lastLine+1 {
			b.WriteString("--\n")
		}
		for i, line := range hit.GetBefore() {
			fmt.Fprintf(&b, "%d-%s\n", first+int64(i), line)
		}
		fmt.Fprintf(&b, "%d:%s\n", hit.GetLineNumber(), hit.GetLine())
		for i, line := range hit.GetAfter() {
			fmt.Fprintf(&b, "%d-%s\n", hit.GetLineNumber()+1+int64(i), line)
		}
		lastLine = hit.GetLineNumber() + int64(len(hit.GetAfter()))
	}
	found := plural(summary.Matches, "matching line", "matching lines") + " in " + plural(summary.FilesMatched, "file", "files")
	return b.String() + summaryLine(summary, found, order)
}

func searchFilesText(paths []string, summary SearchSummary, order SearchOrder) string {
	var b strings.Builder
	for _, path := range paths {
		b.WriteString(path + "\n")
	}
	return b.String() + summaryLine(summary, plural(int64(len(paths)), "file", "files")+" with matches", order)
}

func searchCountsText(counts []*FileMatchCount, summary SearchSummary, order SearchOrder) string {
	var b strings.Builder
	for _, c := range counts {
		fmt.Fprintf(&b, "%s:%d\n", c.GetPath(), c.GetCount())
	}
	found := plural(summary.Matches, "matching line", "matching lines") + " in " + plural(int64(len(counts)), "file", "files")
	return b.String() + summaryLine(summary, found, order)
}

// foundOrderHint is said when files came as found and more than one was
// searched: the page may differ next time.
const foundOrderHint = `files in the order found: order "path" sorts them, for the same page every time`

func summaryLine(summary SearchSummary, found string, order SearchOrder) string {
	if summary.Matches == 0 {
		return "No matches (" + plural(summary.FilesSearched, "file", "files") + " searched).\n"
	}
	line := "(" + found + "; " + plural(summary.FilesSearched, "file", "files") + " searched"
	if summary.Truncated {
		line += "; more exist: raise max_results or narrow the search"
	}
	if summary.TimedOut {
		line += "; the search ran out of time, so results are partial"
	}
	if order == OrderFound && summary.FilesSearched > 1 {
		line += "; " + foundOrderHint
	}
	return line + ")\n"
}

func statText(file *FileInfo) string {
	text := fmt.Sprintf("%s: %s, %s, mode %04o, modified %s, version %s\n",
		file.GetPath(), fileKind(file.GetType()), plural(file.GetSize(), "byte", "bytes"), file.GetMode(), isoTime(file.GetMtime()), file.GetVersion())
	if file.LineCount != nil {
		text += plural(file.GetLineCount(), "line", "lines") + "\n"
	}
	return text
}

func fileKind(t filetoolsv1.FileType) string {
	switch t {
	case filetoolsv1.FileType_FILE_TYPE_FILE:
		return "file"
	case filetoolsv1.FileType_FILE_TYPE_DIRECTORY:
		return "directory"
	case filetoolsv1.FileType_FILE_TYPE_SYMLINK:
		return "symbolic link"
	default:
		return "special file"
	}
}

// changesText is what changed since a snapshot: a count line, then one line
// per path (at most those given; the summary counts all).
func changesText(entries []*DiffEntry, summary DiffSummary) string {
	changed := summary.Added + summary.Modified + summary.Removed
	if changed == 0 {
		return fmt.Sprintf("Nothing changed since snapshot %s (%s).\n", summary.From, plural(summary.Unchanged, "path", "paths"))
	}
	text := fmt.Sprintf("Since snapshot %s: %s added, %s modified, %s removed, %s unchanged.\n",
		summary.From, count(summary.Added), count(summary.Modified), count(summary.Removed), count(summary.Unchanged))
	for _, entry := range entries {
		text += changeLine(entry) + "\n"
	}
	if int64(len(entries)) < changed {
		text += "… " + plural(changed-int64(len(entries)), "more change", "more changes") + " not shown: raise max_entries\n"
	}
	return text
}

func changeSide(t filetoolsv1.DiffEntryType, size int64) string {
	if t == filetoolsv1.DiffEntryType_DIFF_ENTRY_TYPE_SYMLINK {
		return "symbolic link"
	}
	return plural(size, "byte", "bytes")
}

func changeLine(entry *DiffEntry) string {
	if entry.GetKind() == filetoolsv1.DiffKind_DIFF_KIND_REMOVED {
		return "removed " + entry.GetPath()
	}
	after := changeSide(entry.GetTypeAfter(), entry.GetSizeAfter())
	if entry.GetKind() == filetoolsv1.DiffKind_DIFF_KIND_ADDED {
		return "added " + entry.GetPath() + " (" + after + ")"
	}
	if before := changeSide(entry.GetTypeBefore(), entry.GetSizeBefore()); before != after {
		after += ", was " + before
	}
	return "modified " + entry.GetPath() + " (" + after + ")"
}

// snapshotsText is one line per snapshot, newest first.
func snapshotsText(snapshots []*Snapshot) string {
	if len(snapshots) == 0 {
		return "No snapshots yet (one is taken when a run finishes).\n"
	}
	var text strings.Builder
	for _, s := range snapshots {
		fmt.Fprintf(&text, "%s: %s, %s, %s", s.GetId(), isoTime(s.GetCreatedAt()), plural(s.GetFileCount(), "file", "files"), plural(s.GetSizeBytes(), "byte", "bytes"))
		if s.GetRunId() != "" {
			text.WriteString(", run " + s.GetRunId())
		}
		if labels := s.GetLabels(); len(labels) > 0 {
			keys := slices.Sorted(maps.Keys(labels))
			pairs := make([]string, len(keys))
			for i, key := range keys {
				pairs[i] = key + "=" + labels[key]
			}
			text.WriteString("; labels " + strings.Join(pairs, ", "))
		}
		text.WriteString("\n")
	}
	return text.String()
}

func exportText(path, destination string, files, size int64, version string) string {
	return fmt.Sprintf("Exported %s to %s: %s, %s. Version %s.\n", path, destination, plural(files, "file", "files"), plural(size, "byte", "bytes"), version)
}

func importText(archive, destination string, files, size int64) string {
	return fmt.Sprintf("Imported %s into %s: %s, %s written.\n", archive, destination, plural(files, "file", "files"), plural(size, "byte", "bytes"))
}

// isoTime is RFC 3339 in UTC with milliseconds (2026-12-03T10:00:00.123Z),
// as JavaScript's Date.toISOString writes it: a year past 9999 or before 0
// with a sign and six digits, a time past JavaScript's dates (±8.64e15 ms
// from 1970, ±275,760 years) "unknown".
func isoTime(t *timestamppb.Timestamp) string {
	const limit = 8_640_000_000_000_000 // ms
	if t == nil || t.GetSeconds() > limit/1000 || t.GetSeconds() < -limit/1000-1 {
		return "unknown"
	}
	ms := t.GetSeconds()*1000 + int64(t.GetNanos()/1e6)
	if ms > limit || ms < -limit {
		return "unknown"
	}
	date := time.UnixMilli(ms).UTC()
	if year := date.Year(); year < 0 || year > 9999 {
		return fmt.Sprintf("%+07d", year) + date.Format("-01-02T15:04:05.000Z")
	}
	return date.Format("2006-01-02T15:04:05.000Z")
}

// errorText is a failed call, for a model: the reason and the message, then
// what to do next.
func errorText(reason, message string, metadata map[string]string) string {
	return toolErrorText("", reason, message, metadata)
}

// toolErrorText is errorText for a failed call of tool, whose own hints for
// reason (if it has some) replace the shared ones.
func toolErrorText(tool, reason, message string, metadata map[string]string) string {
	if !strings.HasSuffix(message, ".") {
		message += "."
	}
	text := "Error (" + reason + "): " + message + "\n"
	for _, hint := range hintsFor(tool, reason, metadata) {
		text += hint + "\n"
	}
	return text
}

var placeholder = regexp.MustCompile(`\{(\w+)\}`)

// hintsFor is the catalogue's sentences for reason (tool's own for it, when
// it has some, instead of the shared ones); a sentence with placeholders only
// when the metadata fills them all.
func hintsFor(tool, reason string, metadata map[string]string) []string {
	sentences, own := toolCatalogue().toolHints[tool][reason]
	if !own {
		sentences = toolCatalogue().ErrorHints[reason]
	}
	var hints []string
	for _, sentence := range sentences {
		complete := true
		filled := placeholder.ReplaceAllStringFunc(sentence, func(match string) string {
			value := metadata[match[1:len(match)-1]]
			if value == "" {
				complete = false
			}
			return value
		})
		if complete {
			hints = append(hints, filled)
		}
	}
	return hints
}

// jsQuote is JSON.stringify of a string: JavaScript escapes only the quote,
// the backslash and control characters (encoding/json also escapes <, >, &,
// U+2028 and U+2029, which a model would then read differently).
func jsQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r) // invalid UTF-8 comes out as U+FFFD, as JavaScript would have decoded it
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

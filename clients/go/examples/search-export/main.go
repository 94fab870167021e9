// Command search-export searches a workspace of a running filetoolsd and
// exports the artifacts of its last run (or, with -live, of the workspace as
// it is now) to a .tar.gz file. The README shows a run to try it on.
//
//	go run ./examples/search-export -workspace reports -pattern TODO -include 'out/**' -o artifacts.tar.gz
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"time"

	filetools "github.com/filetools/filetools/clients/go"
)

func main() {
	address := flag.String("address", envOr("FILETOOLS_ADDRESS", "127.0.0.1:7447"), "daemon address, host:port or unix:///path")
	token := flag.String("token", os.Getenv("FILETOOLS_TOKEN"), "bearer token, if the daemon has a tokens file")
	workspace := flag.String("workspace", "", "workspace to search and export (required)")
	pattern := flag.String("pattern", "TODO", "regular expression to search for")
	maxResults := flag.Int("max", 20, "matches to print at most")
	include := flag.String("include", "", "comma-separated globs of the artifacts to export, e.g. 'out/**' (default: every file)")
	snapshot := flag.String("snapshot", "", "snapshot id to export (default: the newest, i.e. the last run's)")
	live := flag.Bool("live", false, "export the workspace as it is now instead of a snapshot")
	out := flag.String("o", "artifacts.tar.gz", "file to write the tarball to")
	flag.Parse()
	if *workspace == "" {
		flag.Usage()
		os.Exit(2)
	}

	// Ctrl-C cancels the calls in flight; a minute is the whole budget.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	var options []filetools.Option
	if *token != "" {
		options = append(options, filetools.WithToken(*token))
	}
	client, err := filetools.Dial(ctx, *address, options...)
	if err != nil {
		fail(err)
	}
	defer client.Close()

	var summary filetools.SearchSummary
	for match, err := range client.Search(ctx, *workspace, *pattern, filetools.SearchOptions{MaxResults: int32(*maxResults), Summary: &summary}) {
		if err != nil {
			fail(err)
		}
		fmt.Printf("%s:%d: %s\n", match.GetPath(), match.GetLineNumber(), match.GetLine())
	}
	more := ""
	if summary.Truncated {
		more = " (more not shown)"
	}
	fmt.Printf("%s in %d of %s%s\n", count(summary.Matches, "match", "matches"), summary.FilesMatched, count(summary.FilesSearched, "file", "files"), more)

	var globs []string
	if *include != "" {
		globs = strings.Split(*include, ",")
	}
	info, err := client.ExportSnapshotToFile(ctx, *workspace, *out, filetools.ExportOptions{SnapshotID: *snapshot, Live: *live, Include: globs})
	if err != nil {
		fail(err)
	}
	fmt.Printf("wrote %s: %s, %d bytes, sha256 %s\n", *out, count(info.GetFileCount(), "file", "files"), info.GetSize(), info.GetSha256())
	if info.GetFileCount() == 0 && len(globs) > 0 {
		fmt.Fprintf(os.Stderr, "no file matched -include %s\n", *include)
	}
}

// count says n with its noun: "1 match", "2 matches".
func count(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// fail prints an error for a person, naming the common cases, and exits 1.
func fail(err error) {
	switch {
	case errors.Is(err, filetools.ErrWorkspaceNotFound):
		fmt.Fprintln(os.Stderr, "no such workspace:", err)
	case errors.Is(err, filetools.ErrNotFound):
		fmt.Fprintln(os.Stderr, "nothing to export (no snapshot yet? try -live):", err)
	case errors.Is(err, filetools.ErrUnauthenticated), errors.Is(err, filetools.ErrWorkspaceNotAllowed):
		fmt.Fprintln(os.Stderr, "access denied (check -token):", err)
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintln(os.Stderr, "timed out:", err)
	default:
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(1)
}

func envOr(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

package filetools_test

// Smoke test of examples/search-export: built with `go build` and run
// against the test daemon, as a person would run it.

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	filetools "github.com/filetools/filetools/clients/go"
)

func TestExampleSearchExport(t *testing.T) {
	daemon := startDaemon(t)
	client := daemon.client(t)
	ctx := testContext(t)
	run, err := client.StartRun(ctx, "reports", filetools.StartRunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"src/main.go":   "package main\n// TODO: retry\n",
		"out/report.md": "# Report\nTODO: sign off\n",
	} {
		if _, err := client.WriteText(ctx, "reports", name, content, filetools.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.FinishRun(ctx, "reports", run.GetId(), filetools.FinishRunOptions{}); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	program := filepath.Join(dir, "search-export")
	if output, err := exec.Command("go", "build", "-o", program, "./examples/search-export").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, output)
	}
	tarball := filepath.Join(dir, "artifacts.tar.gz")
	output, err := exec.Command(program, "-address", daemon.address, "-workspace", "reports", "-pattern", "TODO", "-include", "out/**", "-o", tarball).CombinedOutput()
	if err != nil {
		t.Fatalf("search-export: %v\n%s", err, output)
	}
	got := string(output)
	for _, want := range []string{
		"/out/report.md:2: TODO: sign off\n",
		"/src/main.go:2: // TODO: retry\n",
		"2 matches in 2 of 2 files\n",
		"wrote " + tarball + ": 1 file, ",
		"sha256 " + sha256File(t, tarball) + "\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("search-export output lacks %q:\n%s", want, got)
		}
	}
	if members := tarMembers(t, tarball); len(members) != 1 || members["out/report.md"] != "# Report\nTODO: sign off\n" {
		t.Errorf("exported artifacts: %v, want out/report.md alone", members)
	}

	// One match is "1 match"; an -include that matches nothing says so.
	output, err = exec.Command(program, "-address", daemon.address, "-workspace", "reports", "-pattern", "sign off", "-include", "docs/**", "-o", filepath.Join(dir, "empty.tar.gz")).CombinedOutput()
	got = string(output)
	if err != nil {
		t.Fatalf("search-export: %v\n%s", err, output)
	}
	for _, want := range []string{"1 match in 1 of 2 files\n", ": 0 files, ", "no file matched -include docs/**\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("search-export output lacks %q:\n%s", want, got)
		}
	}

	// A workspace that does not exist: a message for a person and exit code 1.
	output, err = exec.Command(program, "-address", daemon.address, "-workspace", "nope", "-o", filepath.Join(dir, "none.tar.gz")).CombinedOutput()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 || !strings.HasPrefix(string(output), "no such workspace:") {
		t.Errorf("search-export of a missing workspace: %v\n%s", err, output)
	}
}

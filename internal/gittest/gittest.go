// Package gittest makes scratch git repositories for tests. It runs plain git, not gitsafe:
// what it builds is the test's own fixture, and gitsafe's tests need git as it is to show what
// gitsafe turns off. No code but tests imports it (runner/internal/layering checks).
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// identity is the committer of every fixture's commit, so no machine's configuration is needed.
var identity = []string{"-c", "user.name=t", "-c", "user.email=t@t"}

// Git runs git with args in dir as the fixtures' committer and returns its output; a failure
// fails tb.
func Git(tb testing.TB, dir string, args ...string) string {
	tb.Helper()
	cmd := exec.Command("git", append(append([]string(nil), identity...), args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		tb.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

// Init makes dir (made if missing) a repository on branch main with nothing committed.
func Init(tb testing.TB, dir string) {
	tb.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	Git(tb, dir, "init", "-q", "-b", "main")
}

// CommitAll commits everything in the repository at dir as one commit, "base" (an empty one
// when there is nothing).
func CommitAll(tb testing.TB, dir string) {
	tb.Helper()
	Git(tb, dir, "add", ".")
	Git(tb, dir, "commit", "-q", "--allow-empty", "-m", "base")
}

// Repo is a repository in a folder of its own, on branch main, with one commit of files (each a
// path relative to the root, slash-separated, and its text).
func Repo(tb testing.TB, files map[string]string) string {
	tb.Helper()
	root := tb.TempDir()
	Init(tb, root)
	for name, text := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	CommitAll(tb, root)
	return root
}

package workflow

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The lines each hunk of a branch's diff adds, file by file; a changed line that reads like a
// header stays a changed line.
func TestAddedHunks(t *testing.T) {
	diff := strings.Join([]string{
		"diff --git a/calc/calc.go b/calc/calc.go",
		"index 1..2 100644",
		"--- a/calc/calc.go",
		"+++ b/calc/calc.go",
		"@@ -2,0 +3 @@ package calc",
		"+// Add returns the sum of a and b.",
		"@@ -7,2 +8,3 @@ func Add(a, b int) int {",
		"-x",
		"-y",
		"+++ b/evil.go",
		"+@@ -1 +1,9 @@",
		"+z",
		"diff --git a/gone.go b/gone.go",
		"--- a/gone.go",
		"+++ /dev/null",
		"@@ -1,3 +0,0 @@",
		"-a",
		"-b",
		"-c",
		"--- a/x.go",
		"+++ b/x.go",
		"@@ -1 +1 @@",
		"-old",
		"\\ No newline at end of file",
		"+new",
		"+++ b/../outside.go",
		"@@ -1 +1 @@",
	}, "\n")
	assert.Equal(t, []hunk{{"calc/calc.go", 3, 1}, {"calc/calc.go", 8, 3}, {"x.go", 1, 1}}, addedHunks(diff))
}

func FuzzAddedHunks(f *testing.F) {
	f.Add("+++ b/a.go\n@@ -1 +1,2 @@\n-a\n+b\n+c\n")
	f.Add("+++ b/a.go\n@@ -0,0 +1 @@\n++++ b/x\n@@ -1 +1 @@\n")
	f.Fuzz(func(t *testing.T, diff string) {
		for _, h := range addedHunks(diff) {
			if h.start < 1 || h.lines < 1 || !filepath.IsLocal(h.file) {
				t.Fatalf("a hunk that names no lines of a file in the tree: %+v", h)
			}
		}
	})
}

package mutate

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGoMutantsCompile builds every Go mutant of the fixtures and of goCases: each kind is
// meant to keep a compiling file compiling, so that a verify rejecting a mutant rejects its
// behaviour, not a build error. Each mutant is a package of its own in one module, built by
// one go build so the machine's cores share the work.
//
// What the kinds cannot promise, and these fixtures do not hold: an identifier of another file
// of the package (a constant zero divisor, a string-typed + operand) is unknown when the file is
// checked alone, so a swap may then fail to build; a dot import's last use is not tracked; a
// negated condition or swapped operator may make a loop run forever, which the caller bounds
// with the verify's time limit.
func TestGoMutantsCompile(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	if testing.Short() {
		t.Skip("builds every mutant")
	}
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.mod"), []byte("module mutants\n\ngo 1.26\n"), 0o644))

	var descs []string
	write := func(name string, src []byte, start, end int) {
		ms, err := Span(name, src, start, end, 1000)
		require.NoError(t, err)
		require.NotEmpty(t, ms, name)
		for _, m := range ms {
			dir := filepath.Join(root, fmt.Sprintf("m%04d", len(descs)))
			require.NoError(t, os.Mkdir(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), m.Text, 0o644))
			descs = append(descs, fmt.Sprintf("%s %s: %s", name, m.Kind, m.Desc))
		}
	}
	for _, name := range []string{"list.go", "sort.go", "strings.go"} {
		write(name, fixture(t, name), 1, 1<<20)
	}
	for i, c := range goCases {
		start, end := c.start, c.end
		if start == 0 {
			start, end = 1, strings.Count(c.src, "\n")
		}
		write(fmt.Sprintf("case%d.go", i), []byte(c.src), start, end)
	}
	t.Logf("%d mutants", len(descs))

	cmd := exec.Command(gobin, "build", "./...")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err == nil {
		return
	}
	failed := map[int]bool{}
	for _, m := range regexp.MustCompile(`m(\d{4})/`).FindAllStringSubmatch(string(out), -1) {
		n, _ := strconv.Atoi(m[1])
		if n < len(descs) && !failed[n] {
			failed[n] = true
			t.Errorf("does not build: %s", descs[n])
		}
	}
	t.Fatalf("go build: %v\n%s", err, out)
}

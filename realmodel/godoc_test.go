//go:build realmodel

package realmodel

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/editcheck"
	"github.com/locumdev/locum/internal/gittest"
)

// TestGoDocOnARealModel runs the built-in go-doc workflow over a real package, the Go
// distribution's container/ring with its doc comments taken out (testdata/ring, BSD licence, The
// Go Authors): whatever the model writes, the branch offered changes comments only, each item
// says its edit is one no verify can check, and runs analyze does not rate such a run good.
func TestGoDocOnARealModel(t *testing.T) {
	s := shared
	dir := t.TempDir()
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/ring\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "ring"), 0o755))
	for _, name := range []string{"ring.go", "ring_test.go"} {
		data, err := os.ReadFile(filepath.Join("testdata", "ring", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "ring", name), data, 0o644))
	}
	gittest.Init(t, dir)
	gittest.CommitAll(t, dir)
	base := readFile(t, filepath.Join(dir, "ring", "ring.go"))

	r := s.locumIn(t, dir, home, "run", "go-doc", "--param", "dir=ring", "--model", s.model, "--json")
	t.Logf("%s", r.stderr)
	require.NotNil(t, r.result, "no result object; stderr:\n%s", r.stderr)
	details, _ := r.result["details"].(map[string]any)
	require.NotNil(t, details, "no details: %v", r.result)
	items, _ := details["items"].([]any)
	require.NotEmpty(t, items)
	green, guarded := 0, 0
	var keptRun string
	for _, raw := range items {
		it := raw.(map[string]any)
		status, _ := it["status"].(string)
		outcome, _ := it["outcome"].(string)
		t.Logf("real-model go-doc item: %s %s %v: %s", it["item"], status, it["verify_strength"], outcome)
		switch {
		case status == "OK":
			green++
			keptRun, _ = it["run_id"].(string)
			assert.Contains(t, outcome, "the edit changed comments only, which no verify can check: read the diff")
			assert.Equal(t, "0/0", it["verify_strength"])
		case strings.Contains(outcome, "no edit passed the checks before the verify"):
			guarded++
		}
	}
	line := fmt.Sprintf("go-doc kept %d of %d items, %d stopped before their verify by the shape check or the comments guard; %s",
		green, len(items), guarded, lastLine(r.stderr))
	t.Log(line)
	fmt.Fprintf(os.Stderr, "realmodel: %s\n", line)
	assert.Equal(t, base, readFile(t, filepath.Join(dir, "ring", "ring.go")), "the workflow touched the user's tree")
	if green == 0 {
		return
	}
	branch, _ := details["branch"].(string)
	require.NotEmpty(t, branch, "green items and a passing final verify offer the branch")
	after := gittest.Git(t, dir, "show", branch+":ring/ring.go")
	assert.NoError(t, editcheck.CheckGuard(editcheck.GuardComments, "ring.go", []byte(base), []byte(after)), "the branch changed more than comments")

	a := s.locumIn(t, dir, home, "runs", "analyze", keptRun, "--json")
	require.Equal(t, 0, a.exit, a.stderr)
	require.NotNil(t, a.result, "no analysis object: %s", a.stdout)
	assert.NotEqual(t, "good", a.result["health"], "a kept comment edit no verify can check is not rated good")
	t.Logf("runs analyze of a kept item: %v %v", a.result["health"], a.result["reasons"])
}

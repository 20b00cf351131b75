//go:build realmodel

package realmodel

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
)

// tidyVerify is the Python module's real verify: it compiles, and its conversions still round-trip
// (testdata/colors/test_colorsys.py). No bytecode is written beside it.
const tidyVerify = "PYTHONDONTWRITEBYTECODE=1 python3 -m py_compile colorsys.py && PYTHONDONTWRITEBYTECODE=1 python3 -m unittest -q test_colorsys"

// TestTidyPythonOnARealModel runs the built-in tidy workflow over a real Python module, CPython's
// colorsys (testdata/colors, PSF licence), with a real verify: every declaration tree-sitter finds
// is an item (the test module left out), each ends in one of the closed outcomes, the branch
// offered holds exactly the green items and passes the verify, and the user's tree is untouched.
// The run is bounded: 20 minutes for its eleven items on one slot.
func TestTidyPythonOnARealModel(t *testing.T) {
	s := shared
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 to verify with")
	}
	dir := t.TempDir()
	home := t.TempDir()
	for _, name := range []string{"colorsys.py", "test_colorsys.py"} {
		data, err := os.ReadFile(filepath.Join("testdata", "colors", name))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	gittest.Init(t, dir)
	gittest.CommitAll(t, dir)
	base := readFile(t, filepath.Join(dir, "colorsys.py"))

	listed := s.locumIn(t, dir, home, "symbols", "colorsys.py")
	require.Equal(t, 0, listed.exit, listed.stderr)
	for _, want := range []string{"function rgb_to_hls", "function _v", "var ONE_THIRD"} {
		assert.Contains(t, listed.stdout, want)
	}

	started := time.Now()
	r := s.locumWithin(t, 20*time.Minute, dir, home, "run", "tidy", "--param", "glob=*.py", "--param", "verify="+tidyVerify,
		"--verify-timeout", "1m", "--model", s.model, "--json")
	t.Logf("%s", r.stderr)
	require.NotNil(t, r.result, "no result object; stderr:\n%s", r.stderr)
	details, _ := r.result["details"].(map[string]any)
	require.NotNil(t, details, "no details: %v", r.result)
	items, _ := details["items"].([]any)
	require.Len(t, items, strings.Count(listed.stdout, "\n"), "an item for each declaration listed")
	var green []string
	for _, raw := range items {
		it := raw.(map[string]any)
		status, _ := it["status"].(string)
		require.True(t, slices.Contains([]string{"OK", "RED", "ERROR", "CONFLICT"}, status), "item %v", it)
		assert.NotContains(t, it["item"], "test_colorsys", "a test module is no item")
		t.Logf("real-model tidy item: %s %s: %s", it["item"], status, it["outcome"])
		if status == "OK" {
			green = append(green, it["item"].(string))
		}
	}
	line := fmt.Sprintf("tidy kept %d of %d declarations of colorsys.py in %s; %s", len(green), len(items),
		time.Since(started).Round(time.Second), lastLine(r.stderr))
	t.Log(line)
	fmt.Fprintf(os.Stderr, "realmodel: %s\n", line)
	assert.Equal(t, base, readFile(t, filepath.Join(dir, "colorsys.py")), "the workflow touched the user's tree")
	assert.NoFileExists(t, filepath.Join(dir, "__pycache__", "colorsys.cpython-311.pyc"))

	status, _ := details["status"].(string)
	if len(green) == 0 {
		assert.Equal(t, "no_change", status)
		return
	}
	branch, _ := details["branch"].(string)
	if status != "completed" || branch == "" {
		// A final verify that fails on the combined items drops the branch; that is a verdict.
		t.Logf("no branch offered: status %s", status)
		return
	}
	tidied := gittest.Git(t, dir, "show", branch+":colorsys.py")
	check := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(check, "colorsys.py"), []byte(tidied), 0o644))
	data, err := os.ReadFile(filepath.Join("testdata", "colors", "test_colorsys.py"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(check, "test_colorsys.py"), data, 0o644))
	ok, out := task{Verify: tidyVerify}.verify(t, check)
	assert.True(t, ok, "the branch offered passes the real verify:\n%s", out)
}

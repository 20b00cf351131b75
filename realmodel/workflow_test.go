//go:build realmodel

package realmodel

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
)

// workflowSrc is a package of three small functions, each with an edit a verify can check on its
// own: the items of a for_each over its declarations.
const workflowSrc = `package calc

// Double returns twice x.
func Double(x int) int {
	return x
}

// Square returns x times x.
func Square(x int) int {
	return x
}

// Negate returns minus x.
func Negate(x int) int {
	return x
}
`

// workflowPack fixes each function as its doc comment says; each item's verify checks its own
// function with the Go toolchain's formatter and a text match, so the run judges the model's
// edits, not a compile in a cold sandbox cache.
const workflowPack = `{"portulan":{"pack":"1.2"},"name":"demo","category":"tools","contributes":{"workflows":{"fix-doc":{` +
	`"steps":[{"name":"fix","mode":"transform","for_each":{"symbols":"calc.go"},` +
	`"with":{"task":"Make {{symbol}} do what its doc comment says. Keep its name and signature.","verify":"test -z \"$(gofmt -l calc.go)\" && bash check.sh {{symbol}}"}}],` +
	`"verify":"test -z \"$(gofmt -l calc.go)\" && bash check.sh any"}}}}`

// workflowCheck passes for a function whose body does what its doc says (in the few ways a model
// writes it), and for "any" when at least one does.
const workflowCheck = `want() {
  case $1 in
    Double) grep -Eq 'return (x \* 2|2 \* x|x \+ x|x << 1)$' calc.go ;;
    Square) grep -Eq 'return x \* x$' calc.go ;;
    Negate) grep -Eq 'return (-x|0 - x|-1 \* x)$' calc.go ;;
    any) want Double || want Square || want Negate ;;
  esac
}
want "$1"
`

// TestWorkflowOnARealModel runs a for_each transform over three declarations on the real
// server: the pool reads the server's own slot count (the tier starts it with one), every item
// ends in one of the closed outcomes, the branch holds exactly the green items and passes the
// final verify, and the user's tree is untouched.
func TestWorkflowOnARealModel(t *testing.T) {
	s := shared
	dir := t.TempDir()
	home := t.TempDir()
	files := map[string]string{
		"calc.go":                           workflowSrc,
		"check.sh":                          workflowCheck,
		".locum/workspace.json":             `{"packs":["tools/local-llm","tools/demo"]}`,
		".locum/packs/tools/demo/pack.json": workflowPack,
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	gittest.Init(t, dir)
	gittest.CommitAll(t, dir)

	r := s.locumIn(t, dir, home, "run", "fix-doc", "--jobs", "4", "--model", s.model, "--json")
	t.Logf("%s", r.stderr)
	require.NotNil(t, r.result, "no result object; stderr:\n%s", r.stderr)
	details, _ := r.result["details"].(map[string]any)
	require.NotNil(t, details, "no details: %v", r.result)

	servers, _ := details["servers"].([]any)
	require.Len(t, servers, 1)
	srv := servers[0].(map[string]any)
	assert.EqualValues(t, 1, srv["slots"], "llama-server started with --parallel 1 says one slot")
	assert.EqualValues(t, 1, srv["capacity"], "the pool gives a server no more than its slots, whatever --jobs says")

	items, _ := details["items"].([]any)
	require.Len(t, items, 3)
	var green []string
	for _, raw := range items {
		it := raw.(map[string]any)
		status, _ := it["status"].(string)
		require.True(t, slices.Contains([]string{"OK", "RED", "ERROR", "CONFLICT"}, status), "item %v", it)
		t.Logf("real-model workflow item: %s %s: %s", it["item"], status, it["outcome"])
		if status == "OK" {
			green = append(green, strings.TrimPrefix(it["item"].(string), "calc.go#"))
			assert.NotEmpty(t, it["commit"], "a green edit is committed")
		}
	}
	assert.Equal(t, workflowSrc, readFile(t, filepath.Join(dir, "calc.go")), "the workflow touched the user's tree")
	assert.Empty(t, strings.TrimSpace(gittest.Git(t, dir, "status", "--porcelain")), "the user's tree has changes")
	assert.NotContains(t, gittest.Git(t, dir, "worktree", "list"), "locum", "a worktree was left")

	status, _ := details["status"].(string)
	t.Logf("real-model workflow: status %s, %d of 3 green, receipt %s", status, len(green), lastLine(r.stderr))
	if len(green) == 0 {
		assert.Equal(t, "no_change", status)
		assert.Equal(t, 1, r.exit)
		assert.Nil(t, details["branch"])
		return
	}
	require.Equal(t, "completed", status, "green items and a final verify that passes on them offer the branch")
	branch := details["branch"].(string)
	show := gittest.Git(t, dir, "show", branch+":calc.go")
	for _, fn := range []string{"Double", "Square", "Negate"} {
		orig := strings.Contains(show, "func "+fn+"(x int) int {\n\treturn x\n}")
		assert.Equal(t, !slices.Contains(green, fn), orig, "%s: the branch holds exactly the green items", fn)
	}
	if len(green) == 3 {
		assert.Equal(t, 0, r.exit)
	} else {
		assert.Equal(t, 1, r.exit, "an item not green is exit 1, the branch still offered")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

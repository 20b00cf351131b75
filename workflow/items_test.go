package workflow

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
)

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		path := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	return root
}

func keys(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Key
	}
	return out
}

func TestExpand(t *testing.T) {
	root := writeTree(t, map[string]string{
		"pkg/a.go":      "package pkg\n\nfunc A() {}\n\ntype T struct{}\n\nfunc (T) M() {}\n",
		"pkg/b.go":      "package pkg\n\nvar B = 1\n",
		"pkg/a_test.go": "package pkg\n\nfunc TestA() {}\n",
		"pkg/notes.md":  "x",
		"list.txt":      "one\n\n  two \none\nthree",
	})
	vars := map[string]string{"dir": "pkg"}
	for _, c := range []struct {
		name    string
		forEach *packs.ForEach
		want    []string
		vars    map[string]string
	}{
		{"no for_each is one item, the step", nil, []string{"s"}, nil},
		{"files, sorted", &packs.ForEach{Files: "{{dir}}/*.go"}, []string{"pkg/a.go", "pkg/a_test.go", "pkg/b.go"}, nil},
		{"symbols, test files left out", &packs.ForEach{Symbols: "{{dir}}/*.go"}, []string{"pkg/a.go#A", "pkg/a.go#T", "pkg/a.go#T.M", "pkg/b.go#B"},
			map[string]string{"item": "pkg/a.go#T.M", "file": "pkg/a.go", "symbol": "T.M"}},
		{"lines, blank and repeated ones once", &packs.ForEach{Lines: "list.txt"}, []string{"one", "two", "three"}, map[string]string{"item": "two", "line": "two"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			items, err := expand(root, packs.WorkflowStep{Name: "s", ForEach: c.forEach}, vars)
			require.NoError(t, err)
			assert.Equal(t, c.want, keys(items))
			if c.vars != nil {
				for _, it := range items {
					if it.Key == c.vars["item"] {
						assert.Equal(t, c.vars, it.Vars)
					}
				}
			}
		})
	}
}

func TestExpandRefuses(t *testing.T) {
	root := writeTree(t, map[string]string{"a.md": "x", "broken.go": "package"})
	outside := writeTree(t, map[string]string{"secret.md": "s"})
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.md"), filepath.Join(root, "link.md")))
	require.NoError(t, os.Mkdir(filepath.Join(root, "dir.md"), 0o755))

	items, err := expand(root, packs.WorkflowStep{Name: "s", ForEach: &packs.ForEach{Files: "*.md"}}, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"a.md"}, keys(items), "a link out of the repository and a folder are no items")

	for _, c := range []struct {
		name    string
		forEach packs.ForEach
		want    string
	}{
		{"a glob out of the repository", packs.ForEach{Files: "../*.md"}, "inside the repository"},
		{"an absolute glob", packs.ForEach{Files: "/etc/*"}, "inside the repository"},
		{"a bad pattern", packs.ForEach{Files: "[.md"}, "syntax error"},
		{"no match", packs.ForEach{Files: "*.txt"}, "gives no item"},
		{"a template naming nothing given", packs.ForEach{Files: "{{dir}}/*.md"}, "{{dir}}"},
		{"Go that does not parse", packs.ForEach{Symbols: "broken.go"}, "does not parse"},
		{"a missing list", packs.ForEach{Lines: "none.txt"}, "none.txt"},
		{"a list out of the repository", packs.ForEach{Lines: "link.md"}, "link.md"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := expand(root, packs.WorkflowStep{Name: "s", ForEach: &c.forEach}, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}

	var list strings.Builder
	for i := range MaxItems + 1 {
		fmt.Fprintf(&list, "line %d\n", i)
	}
	many := writeTree(t, map[string]string{"list.txt": list.String()})
	_, err = expand(many, packs.WorkflowStep{Name: "s", ForEach: &packs.ForEach{Lines: "list.txt"}}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than the 1000 a step runs over")
}

func TestBindParams(t *testing.T) {
	def := "d"
	wf := packs.Workflow{Params: map[string]packs.Param{"dir": {Doc: "the folder"}, "glob": {Default: &def}}}
	got, err := bindParams("w", wf, map[string]string{"dir": "x"})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"dir": "x", "glob": "d"}, got)
	_, err = bindParams("w", wf, nil)
	assert.ErrorContains(t, err, "workflow w needs --param dir=VALUE (the folder)")
	_, err = bindParams("w", wf, map[string]string{"dir": "x", "evil": "y"})
	assert.ErrorContains(t, err, `workflow w takes no parameter "evil"; it takes: dir, glob`)
}

func TestStepOutput(t *testing.T) {
	once := packs.WorkflowStep{Name: "d"}
	assert.Equal(t, "- a claim\n", stepOutput(once, []ItemResult{{Status: "OK", Output: "- a claim\n"}}))
	each := packs.WorkflowStep{Name: "d", ForEach: &packs.ForEach{Files: "*.md"}}
	out := stepOutput(each, []ItemResult{
		{Item: "a.md", Status: "OK", Output: "- one\n"},
		{Item: "b.md", Status: "RED", Output: "- not passed on\n"},
		{Item: "c.md", Status: ItemReused, Output: "- two\n"},
	})
	assert.Equal(t, "a.md:\n- one\nc.md:\n- two\n", out)
}

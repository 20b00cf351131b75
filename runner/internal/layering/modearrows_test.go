package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testLinkedModes are the modes a mode's tests may link as the binary does: workflow's tests run
// real steps, so they link the modes a step runs. The code itself imports none of them.
var testLinkedModes = map[string][]string{
	"workflow": {"runner/transform", "runner/summarize", "runner/dedup"},
}

// registersMode reports whether file calls engine.RegisterMode.
func registersMode(file *ast.File) bool {
	found := false
	ast.Inspect(file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || found {
			return !found
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "RegisterMode" {
			return true
		}
		if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "engine" {
			found = true
		}
		return !found
	})
	return found
}

// modePackages lists the module's packages whose own code (not their tests) registers a mode.
func modePackages(t *testing.T, root string) []string {
	t.Helper()
	fset := token.NewFileSet()
	found := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if registersMode(file) {
			rel, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			found[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	require.NoError(t, err)
	var out []string
	for p := range found {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// modeArrows lists each import of another mode's package by a mode's package, or by its tests
// where testsMay does not name it. Only direct imports count: every package above the job layer reaches
// evals (a mode itself) through routing, for the fingerprints of its shipped tasks, and that is
// no mode building on another.
func modeArrows(g, tests graph, modes []string, testsMay map[string][]string) []string {
	isMode := map[string]bool{}
	for _, m := range modes {
		isMode[m] = true
	}
	var out []string
	for _, m := range modes {
		testOK := map[string]bool{}
		for _, a := range testsMay[m] {
			testOK[a] = true
		}
		seen := map[string]bool{}
		add := func(q string) {
			if isMode[q] && q != m && !seen[q] {
				seen[q] = true
				out = append(out, m+" imports the mode "+q)
			}
		}
		for _, q := range g[m] {
			add(q)
		}
		for _, q := range tests[m] {
			if !testOK[q] {
				add(q)
			}
		}
	}
	sort.Strings(out)
	return out
}

// No package that registers a mode imports another: what one mode needs of another's lies
// below both (the engine, gitsafe, runner/review) or comes through its registration.
func TestNoModeImportsAnother(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	modes := modePackages(t, root)
	// The finder must see the modes it guards, or the check below passes on nothing.
	require.Subset(t, modes, []string{"runner/transform", "runner/summarize", "runner/handoff", "runner/dedup", "runner/agent", "runner/verifycheck", "evals", "workflow"})
	g, tests := moduleGraph(t, root)
	assert.Empty(t, modeArrows(g, tests, modes, testLinkedModes))
}

// The check itself, on graphs made to break it.
func TestModeArrowsFindsEachBreak(t *testing.T) {
	modes := []string{"runner/agent", "runner/dedup", "runner/transform", "workflow"}
	base := graph{
		"workflow":         {"job", "runner/engine", "gitsafe", "runner/review"},
		"runner/agent":     {"runner/engine", "runner/review"},
		"runner/transform": {"runner/engine"},
		"runner/dedup":     {"runner/engine"},
	}
	baseTests := graph{"workflow": {"runner/transform", "runner/dedup"}}
	require.Empty(t, modeArrows(base, baseTests, modes, testLinkedModes), "workflow's tests may link the step modes")
	cases := []struct {
		name, from, to string
		test           bool
		want           string
	}{
		{"workflow imports the agent", "workflow", "runner/agent", false, "workflow imports the mode runner/agent"},
		{"workflow's code imports a step mode", "workflow", "runner/transform", false, "workflow imports the mode runner/transform"},
		{"a mode imports another", "runner/agent", "runner/transform", false, "runner/agent imports the mode runner/transform"},
		{"a mode's test imports another", "runner/dedup", "workflow", true, "runner/dedup imports the mode workflow"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, tg := graph{}, graph{}
			for k, v := range base {
				g[k] = append([]string(nil), v...)
			}
			for k, v := range baseTests {
				tg[k] = append([]string(nil), v...)
			}
			if tc.test {
				tg[tc.from] = append(tg[tc.from], tc.to)
			} else {
				g[tc.from] = append(g[tc.from], tc.to)
			}
			assert.Equal(t, []string{tc.want}, modeArrows(g, tg, modes, testLinkedModes))
		})
	}
}

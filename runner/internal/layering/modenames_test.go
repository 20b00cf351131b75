package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
)

// modeHomes are where a mode's own name may decide something: its package.
var modeHomes = map[string]string{
	"transform": "runner/transform",
	"summarize": "runner/summarize",
	"handoff":   "runner/handoff",
	"dedup":     "runner/dedup",
	"agent":     "runner/agent",
	"eval":      "evals",
	"workflow":  "workflow",
	// verify-check's name is the mode's package's alone too.
	"verify-check": "runner/verifycheck",
	"bench":        "bench",
}

// notModes are the words spelt as a mode's name that mean something else where they stand: a
// finding in the file that ends as named, of that word.
var notModes = map[string]string{
	// bash's eval builtin, among those that read an argument as code.
	"packs/command.go": "eval",
	// The journal event a red run of another mode writes as it hands over its closest attempt
	// (engine.HandoffEvent), read back by kind.
	"runner/analyze/analyze.go":   "handoff",
	"runner/engine/handoffuse.go": "handoff",
	"runner/ledger/ledger.go":     "handoff",
	// The key of the handoff mode's reply, whose shape the mode and its eval task share.
	"runner/evidence/handoff.go": "handoff",
}

func notAMode(finding string) bool {
	for file, word := range notModes {
		if strings.Contains(finding, "/"+file+":") && strings.HasSuffix(finding, strconv.Quote(word)) {
			return true
		}
	}
	return false
}

// modeNameComparisons lists each place in src (a file of package dir) that decides something by
// a mode's name: an == or != against the name's literal, a switch case on it, or the literal as a
// key or an element of a map, slice or array literal (a table keyed by mode). What differs by
// mode outside the mode's package comes from its registration instead.
func modeNameComparisons(fset *token.FileSet, file *ast.File, dir string) []string {
	names := map[string]bool{}
	for _, m := range packs.Modes {
		names[m] = true
	}
	isMode := func(e ast.Expr) (string, bool) {
		lit, ok := e.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return "", false
		}
		v, err := strconv.Unquote(lit.Value)
		return v, err == nil && names[v] && modeHomes[v] != dir
	}
	var out []string
	at := func(n ast.Node, name string) {
		out = append(out, fset.Position(n.Pos()).String()+": compares with mode name "+strconv.Quote(name))
	}
	listed := func(n ast.Node, name string) {
		out = append(out, fset.Position(n.Pos()).String()+": lists mode name "+strconv.Quote(name))
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op != token.EQL && n.Op != token.NEQ {
				return true
			}
			for _, side := range []ast.Expr{n.X, n.Y} {
				if name, ok := isMode(side); ok {
					at(n, name)
				}
			}
		case *ast.CompositeLit:
			switch n.Type.(type) {
			case *ast.MapType, *ast.ArrayType, nil:
			default:
				// A struct's field may name a mode (a command's Name, a run's Mode): that is
				// no table keyed by mode.
				return true
			}
			for _, e := range n.Elts {
				if kv, ok := e.(*ast.KeyValueExpr); ok {
					if name, ok := isMode(kv.Key); ok {
						listed(kv.Key, name)
					}
					e = kv.Value
				}
				if name, ok := isMode(e); ok {
					listed(e, name)
				}
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				if name, ok := isMode(e); ok {
					at(e, name)
				}
			}
		}
		return true
	})
	return out
}

func TestNoModeNameComparedOutsideItsMode(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	fset := token.NewFileSet()
	var found []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
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
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, f := range modeNameComparisons(fset, file, filepath.ToSlash(rel)) {
			if !notAMode(f) {
				found = append(found, f)
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, found)
}

// The check itself, on code made to break it.
func TestModeNameComparisonsFindsEachForm(t *testing.T) {
	src := `package p
func f(mode string, r struct{ Mode string }) {
	if mode == "dedup" {}
	if "agent" != r.Mode {}
	switch mode {
	case "transform", "other":
	}
	if mode == "dedupe" || mode == "scope" {}
	_ = map[string]bool{"summarize": true, "x": false}
	_ = []string{"agent", "y"}
	_ = map[string][]string{"x": {"workflow"}}
	_ = struct{ Name string }{Name: "eval"}
}`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src, 0)
	require.NoError(t, err)
	got := modeNameComparisons(fset, file, "cmd/locum")
	assert.Equal(t, []string{
		`p.go:3:5: compares with mode name "dedup"`,
		`p.go:4:5: compares with mode name "agent"`,
		`p.go:6:7: compares with mode name "transform"`,
		`p.go:9:22: lists mode name "summarize"`,
		`p.go:10:15: lists mode name "agent"`,
		`p.go:11:32: lists mode name "workflow"`,
	}, got)
	home := modeNameComparisons(fset, file, "runner/dedup")
	assert.Len(t, home, 5, "a mode's own package may compare its own name, never another's")
}

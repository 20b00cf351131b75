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
)

// gitHome is the one package whose code starts git: every git command locum runs on a
// repository goes through its hardening.
const gitHome = "gitsafe"

// gitFixtures is the test helper that makes scratch repositories with plain git; only tests
// import it (TestHelpersStayInTests).
const gitFixtures = "internal/gittest"

// gitCalls lists each place in file that starts git itself: exec.Command("git", ...) or
// exec.CommandContext(ctx, "git", ...), the program named by a literal.
func gitCalls(fset *token.FileSet, file *ast.File) []string {
	var out []string
	ast.Inspect(file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		pkg, ok := sel.X.(*ast.Ident)
		if !ok || pkg.Name != "exec" {
			return true
		}
		at := map[string]int{"Command": 0, "CommandContext": 1}
		i, ok := at[sel.Sel.Name]
		if !ok || len(call.Args) <= i {
			return true
		}
		lit, ok := call.Args[i].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		if v, err := strconv.Unquote(lit.Value); err == nil && (v == "git" || strings.HasSuffix(v, "/git")) {
			out = append(out, fset.Position(call.Pos()).String()+": starts git outside "+gitHome)
		}
		return true
	})
	return out
}

func TestGitStartsOnlyInGitsafe(t *testing.T) {
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
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		if rel := filepath.ToSlash(rel); rel == gitHome || rel == gitFixtures {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		found = append(found, gitCalls(fset, file)...)
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, found)
}

// The check itself, on code made to break it.
func TestGitCallsFindsEachForm(t *testing.T) {
	src := `package p
func f(ctx context.Context) {
	exec.Command("git", "status")
	exec.CommandContext(ctx, "git", "diff")
	exec.Command("/usr/bin/git")
	exec.Command("bwrap", "git")
	exec.CommandContext(ctx, "bash", "-c", "git status")
}`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src, 0)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"p.go:3:2: starts git outside gitsafe",
		"p.go:4:2: starts git outside gitsafe",
		"p.go:5:2: starts git outside gitsafe",
	}, gitCalls(fset, file))
}

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

	"github.com/locumdev/locum/rails"
)

// kindConstants are rails' names for the server kinds.
var kindConstants = map[string]rails.ServerKind{
	"LMStudio":       rails.LMStudio,
	"Ollama":         rails.Ollama,
	"LlamaServer":    rails.LlamaServer,
	"LlamaCppPython": rails.LlamaCppPython,
	"VLLM":           rails.VLLM,
	"Unknown":        rails.Unknown,
}

// kindHomes are where a server kind may decide something: its dialect's file.
var kindHomes = map[rails.ServerKind]string{
	rails.LMStudio:       "runner/client/lmstudio.go",
	rails.Ollama:         "runner/client/ollama.go",
	rails.LlamaServer:    "runner/client/llamaserver.go",
	rails.LlamaCppPython: "runner/client/llamacpppython.go",
	rails.VLLM:           "runner/client/vllm.go",
	rails.Unknown:        "runner/client/unknown.go",
}

// serverKindComparisons lists each place in file (path, under the module) that compares a value
// with a server kind: an == or != against one of rails' constants or a kind's literal, or a
// switch case on one. What differs by server outside its dialect's file is asked of the dialect.
// The literal "unknown" is left out: it is a word many things are, and rails.Unknown is caught.
func serverKindComparisons(fset *token.FileSet, file *ast.File, path string) []string {
	inRails := filepath.ToSlash(filepath.Dir(path)) == "rails"
	isKind := func(e ast.Expr) (rails.ServerKind, bool) {
		var kind rails.ServerKind
		var ok bool
		switch e := e.(type) {
		case *ast.SelectorExpr:
			if pkg, isIdent := e.X.(*ast.Ident); isIdent && pkg.Name == "rails" {
				kind, ok = kindConstants[e.Sel.Name]
			}
		case *ast.Ident:
			if inRails {
				kind, ok = kindConstants[e.Name]
			}
		case *ast.BasicLit:
			if v, err := strconv.Unquote(e.Value); e.Kind == token.STRING && err == nil && v != string(rails.Unknown) {
				_, ok = kindHomes[rails.ServerKind(v)]
				kind = rails.ServerKind(v)
			}
		}
		return kind, ok && kindHomes[kind] != filepath.ToSlash(path)
	}
	var out []string
	at := func(n ast.Node, kind rails.ServerKind) {
		out = append(out, fset.Position(n.Pos()).String()+": compares with server kind "+strconv.Quote(string(kind)))
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op != token.EQL && n.Op != token.NEQ {
				return true
			}
			for _, side := range []ast.Expr{n.X, n.Y} {
				if kind, ok := isKind(side); ok {
					at(n, kind)
				}
			}
		case *ast.CaseClause:
			for _, e := range n.List {
				if kind, ok := isKind(e); ok {
					at(e, kind)
				}
			}
		}
		return true
	})
	return out
}

func TestNoServerKindComparedOutsideItsDialect(t *testing.T) {
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
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		found = append(found, serverKindComparisons(fset, file, rel)...)
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, found)
	for _, home := range kindHomes {
		assert.FileExists(t, filepath.Join(root, home), "a server kind's home that is not there")
	}
}

// The check itself, on code made to break it.
func TestServerKindComparisonsFindsEachForm(t *testing.T) {
	src := `package p
func f(info *client.ServerInfo, kind rails.ServerKind) {
	if info.Kind == rails.Ollama {}
	if rails.Unknown != kind {}
	switch kind {
	case rails.LlamaServer, "other":
	case "vllm":
	}
	if string(kind) == "lmstudio" || kind == "unknown" || kind == "ollamas" {}
	if LMStudio == kind {}
}`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src, 0)
	require.NoError(t, err)
	assert.Equal(t, []string{
		`p.go:3:5: compares with server kind "ollama"`,
		`p.go:4:5: compares with server kind "unknown"`,
		`p.go:6:7: compares with server kind "llama-server"`,
		`p.go:7:7: compares with server kind "vllm"`,
		`p.go:9:5: compares with server kind "lmstudio"`,
	}, serverKindComparisons(fset, file, "cmd/locum/p.go"))
	assert.Len(t, serverKindComparisons(fset, file, "rails/p.go"), 6, "in rails, a constant is compared by its bare name")
	assert.Len(t, serverKindComparisons(fset, file, "runner/client/ollama.go"), 4, "a dialect's file may compare its own kind, never another's")
}

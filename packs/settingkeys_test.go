package packs

import (
	"bytes"
	"encoding/json"
	"errors"
	"go/ast"
	"go/constant"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSettingKeysAreKnown type-checks every package of the module and finds each call of a
// *Settings accessor (Get, String, Int, Float, Duration, Bool, Set) with a constant key: every such
// key must be one the settings table declares. A misspelt key would otherwise read as zero.
func TestSettingKeysAreKnown(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the module")
	}
	known := map[string]bool{}
	for _, s := range keySpecs {
		known[s.key] = true
	}
	cmd := exec.Command("go", "list", "-export", "-deps", "-json", "github.com/locumdev/locum/...")
	out, err := cmd.Output()
	require.NoError(t, err)
	type pkg struct {
		ImportPath string
		Dir        string
		Export     string
		GoFiles    []string
		Module     *struct{ Path string }
	}
	exports := map[string]string{}
	var ours []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Path == "github.com/locumdev/locum" {
			ours = append(ours, p)
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, errors.New("no export data for " + path)
		}
		return os.Open(exports[path])
	})
	accessors := map[string]bool{"Get": true, "String": true, "Int": true, "Float": true, "Duration": true, "Bool": true, "Set": true}
	checked := 0
	for _, p := range ours {
		var files []*ast.File
		for _, name := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, 0)
			require.NoError(t, err)
			files = append(files, f)
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
		_, err := (&types.Config{Importer: imp}).Check(p.ImportPath, fset, files, info)
		require.NoError(t, err, p.ImportPath)
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !accessors[sel.Sel.Name] {
					return true
				}
				s := info.Selections[sel]
				if s == nil || !strings.HasSuffix(s.Recv().String(), "github.com/locumdev/locum/packs.Settings") {
					return true
				}
				tv := info.Types[call.Args[0]]
				if tv.Value == nil || tv.Value.Kind() != constant.String {
					return true
				}
				key := constant.StringVal(tv.Value)
				checked++
				if !known[key] {
					t.Errorf("%s: %s(%q): no setting has that key", fset.Position(call.Pos()), sel.Sel.Name, key)
				}
				return true
			})
		}
	}
	require.Greater(t, checked, 10, "the walk found the accessor calls")
}

package agent

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// emittedKinds reads the Go code of dirs and returns every event kind it writes to a journal: the
// first argument of a call to a method named Event, or to a function value named event.
func emittedKinds(t *testing.T, dirs ...string) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			require.NoError(t, err)
			ast.Inspect(file, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				name := ""
				switch fn := call.Fun.(type) {
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				case *ast.Ident:
					name = fn.Name
				}
				if name != "Event" && name != "event" {
					return true
				}
				if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					kind, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					seen[kind] = true
				}
				return true
			})
		}
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Every event kind the engine and the modes write is documented in spec/journal.md.
func TestEveryEventKindIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../spec/journal.md")
	require.NoError(t, err)
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
	}
	kinds := emittedKinds(t, "../engine", "../client", "../scope", "../transform", "../summarize", "../dedup", ".", "../../workflow")
	// The transcript kinds the issue names must be among them, so the scan itself is checked.
	for _, want := range []string{"run_start", "assistant", "tool_call", "tool_result", "guardrail_block", "nudge", "verify", "run_end", "fold"} {
		assert.Contains(t, kinds, want)
	}
	for _, k := range kinds {
		assert.True(t, documented[k], "event %q is emitted but not documented in spec/journal.md", k)
	}
}

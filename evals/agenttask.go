package evals

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"sort"
	"strings"

	"github.com/locumdev/locum/runner/scope"
)

//go:embed fixtures/agent.txtar
var agentFixture string

// AgentTask is the multi-file task that is to earn the agent role: change a function's signature
// and update every caller in another file, the shape of work locum agent is for. Both arms answer
// with the files in txtar form, so the same predicate grades the host and the local model: the
// record measures the model's edits, not the tool loop that locum agent runs them in.
func AgentTask() Task {
	prompt := "Here is a small Go package, two files in txtar form (a line `-- PATH --` before each file):\n\n" + agentFixture + "\n" +
		"Add a third parameter `scale int` to Area, so that it returns w * h * scale, and update every call of Area in the " +
		"package to pass 1 as the scale, so that Report's output does not change. Change nothing else. Reply with both files, " +
		"complete, in the same txtar form, and nothing else."
	return Task{ID: "agent", Prompt: prompt, Fixture: agentFixture, PredicateVersion: "agent/2", Grade: gradeAgent}
}

// gradeAgent reads the answer as txtar and checks on the AST of both files: Area takes w, h and
// scale (all int) and returns their product; every call of Area passes 1 as the third argument;
// with the scale taken out again, nothing else in either file changed.
func gradeAgent(answer string) Grade {
	var g Grade
	fail := func(format string, args ...any) Grade {
		g.Evidence = append(g.Evidence, "FAIL "+fmt.Sprintf(format, args...))
		return g
	}
	text := strings.TrimSpace(strings.ReplaceAll(answer, "\r\n", "\n"))
	if blocks, err := scope.FencedBlocks(text); err == nil && len(blocks) == 1 && strings.HasPrefix(text, "```") {
		text = blocks[0]
	}
	got, err := agentFiles(text)
	if err != nil {
		return fail("%v", err)
	}
	want, err := agentFiles(agentFixture)
	if err != nil {
		return fail("the fixture: %v", err)
	}
	g.Evidence = append(g.Evidence, "both files, parsed as Go")
	area := findFunc(got["shapes/area.go"], "Area")
	if area == nil {
		return fail("shapes/area.go has no func Area")
	}
	var names []string
	for _, f := range area.Type.Params.List {
		if id, ok := f.Type.(*ast.Ident); !ok || id.Name != "int" {
			return fail("Area's parameters are not all int")
		}
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
	}
	if strings.Join(names, ",") != "w,h,scale" {
		return fail("Area's parameters are (%s), want (w, h, scale)", strings.Join(names, ", "))
	}
	// A declaration with no body parses (it is how Go declares an assembly function).
	if area.Body == nil || len(area.Body.List) != 1 {
		return fail("Area's body is not one return")
	}
	ret, ok := area.Body.List[0].(*ast.ReturnStmt)
	if !ok || len(ret.Results) != 1 {
		return fail("Area's body is not one return")
	}
	factors := product(ret.Results[0])
	sort.Strings(factors)
	if strings.Join(factors, "*") != "h*scale*w" {
		return fail("Area does not return w * h * scale")
	}
	g.Evidence = append(g.Evidence, "Area(w, h, scale int) returns w * h * scale")
	calls, bad := 0, 0
	ast.Inspect(got["shapes/report.go"], func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if id, isIdent := c.Fun.(*ast.Ident); !isIdent || id.Name != "Area" {
			return true
		}
		calls++
		if len(c.Args) != 3 {
			bad++
			return true
		}
		if lit, ok := c.Args[2].(*ast.BasicLit); !ok || lit.Value != "1" {
			bad++
			return true
		}
		c.Args = c.Args[:2]
		return true
	})
	if bad > 0 || calls != 3 {
		return fail("%d of %d calls of Area pass 1 as the scale, want 3 of 3", calls-bad, calls)
	}
	g.Evidence = append(g.Evidence, "3 of 3 calls pass 1 as the scale")
	if render(got["shapes/report.go"]) != render(want["shapes/report.go"]) {
		return fail("shapes/report.go changed besides the calls")
	}
	// With the fixture's parameters and body put back, area.go must be the fixture's: its
	// package, Area's result and type parameters, and nothing declared besides.
	wantArea := findFunc(want["shapes/area.go"], "Area")
	area.Type.Params, area.Body = wantArea.Type.Params, wantArea.Body
	if render(got["shapes/area.go"]) != render(want["shapes/area.go"]) {
		return fail("shapes/area.go changed besides Area's scale")
	}
	g.Evidence = append(g.Evidence, "nothing else changed")
	g.Passed = true
	return g
}

// agentFiles parses the two files of a txtar answer; any other file, or one missing, fails.
func agentFiles(text string) (map[string]*ast.File, error) {
	out := map[string]*ast.File{}
	for _, f := range splitTxtar(text) {
		if f.Name != "shapes/area.go" && f.Name != "shapes/report.go" {
			return nil, fmt.Errorf("the answer has a file %q besides shapes/area.go and shapes/report.go", f.Name)
		}
		if _, dup := out[f.Name]; dup {
			return nil, fmt.Errorf("the answer has %s twice", f.Name)
		}
		file, err := parser.ParseFile(token.NewFileSet(), f.Name, f.Data, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("%s does not parse as Go: %v", f.Name, err)
		}
		out[f.Name] = file
	}
	if len(out) != 2 {
		return nil, fmt.Errorf("the answer has %d of the 2 files (a line -- PATH -- before each)", len(out))
	}
	return out, nil
}

func findFunc(f *ast.File, name string) *ast.FuncDecl {
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == name && fn.Recv == nil {
			return fn
		}
	}
	return nil
}

// product flattens a * b * c (parentheses included) into its identifiers; anything else makes
// the list wrong on purpose.
func product(e ast.Expr) []string {
	switch x := e.(type) {
	case *ast.ParenExpr:
		return product(x.X)
	case *ast.BinaryExpr:
		if x.Op == token.MUL {
			return append(product(x.X), product(x.Y)...)
		}
	case *ast.Ident:
		return []string{x.Name}
	}
	return []string{"?"}
}

// txtarFile is one file of an answer in txtar form.
type txtarFile struct {
	Name string
	Data []byte
}

// splitTxtar reads text in txtar form: a line `-- NAME --` opens each file, and what precedes
// the first is a comment, dropped. It is locum's own because the text is a model's (or a record
// anyone can write): go-internal's txtar.Parse panics on a line `-- --`, and a predicate must
// grade every answer, never crash on one.
func splitTxtar(text string) []txtarFile {
	var files []txtarFile
	var cur *txtarFile
	for _, line := range strings.SplitAfter(text, "\n") {
		bare := strings.TrimRight(line, "\r\n")
		if name, ok := txtarMarker(bare); ok {
			files = append(files, txtarFile{Name: name})
			cur = &files[len(files)-1]
			continue
		}
		if cur != nil {
			cur.Data = append(cur.Data, line...)
		}
	}
	return files
}

// txtarMarker reports whether line is `-- NAME --` with a name that is not empty.
func txtarMarker(line string) (string, bool) {
	inner, ok := strings.CutPrefix(line, "-- ")
	if !ok {
		return "", false
	}
	inner, ok = strings.CutSuffix(inner, " --")
	if !ok {
		return "", false
	}
	name := strings.TrimSpace(inner)
	return name, name != ""
}

package evals

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"strconv"
	"strings"

	"github.com/locumdev/locum/runner/scope"
	"github.com/locumdev/locum/schema"
)

// Task is one eval task: a prompt (the fixture inside it), and a deterministic predicate written
// in Go that grades an answer with no model, no network and no toolchain.
type Task struct {
	ID      string
	Prompt  string
	Fixture string
	// PredicateVersion changes whenever the predicate's judgement can change.
	PredicateVersion string
	Grade            func(answer string) Grade
}

// Grade is a predicate's verdict and the evidence for it, one finding a line.
type Grade struct {
	Passed   bool     `json:"passed"`
	Evidence []string `json:"evidence"`
}

// Fingerprint is the SHA-256 of the prompt, the fixture and the predicate version: a record
// graded under other tasks says so.
func (t Task) Fingerprint() string {
	sum := sha256.Sum256([]byte(t.Prompt + "\x00" + t.Fixture + "\x00" + t.PredicateVersion))
	return hex.EncodeToString(sum[:])
}

var (
	//go:embed fixtures/code.go.txt
	codeFixture string
	//go:embed fixtures/codify.md
	codifyFixture string
	//go:embed fixtures/handoff.log
	handoffFixture string
)

// Tasks are the eval tasks, in a fixed order.
func Tasks() []Task {
	return []Task{codeTask(), codifyTask(), handoffTask(), AgentTask()}
}

// TaskByID finds a task.
func TaskByID(id string) (Task, bool) {
	for _, t := range Tasks() {
		if t.ID == id {
			return t, true
		}
	}
	return Task{}, false
}

func codeTask() Task {
	prompt := "Here is a Go function from package store, which imports errors, fmt and os:\n\n```go\n" + codeFixture + "```\n\n" +
		"Rewrite Load so that every error it returns from a call (each `return nil, err`) is wrapped with fmt.Errorf and %w, " +
		"with a short message saying what failed. Change nothing else: keep the signature, the other statements and the " +
		"errors.New line exactly as they are. Reply with the whole function in one ```go block and nothing else."
	return Task{ID: "code", Prompt: prompt, Fixture: codeFixture, PredicateVersion: "code/1", Grade: gradeCode}
}

// gradeCode parses the answer with go/parser and checks, on the AST, that every bare `err`
// return became fmt.Errorf with %w wrapping err, and that nothing else changed.
func gradeCode(answer string) Grade {
	var g Grade
	fail := func(format string, args ...any) Grade {
		g.Evidence = append(g.Evidence, "FAIL "+fmt.Sprintf(format, args...))
		return g
	}
	src := answer
	if blocks, err := scope.FencedBlocks(answer); err == nil && len(blocks) == 1 {
		src = blocks[0]
	}
	want, err := parseLoad(codeFixture)
	if err != nil {
		return fail("the fixture does not parse: %v", err)
	}
	got, err := parseLoad(src)
	if err != nil {
		return fail("the answer does not parse as the function Load: %v", err)
	}
	g.Evidence = append(g.Evidence, "parses as Go")
	if render(got.Type) != render(want.Type) {
		return fail("the signature changed: %s", render(got.Type))
	}
	g.Evidence = append(g.Evidence, "signature unchanged")
	bare := countReturns(want, isIdent("err"))
	wrapped := countReturns(got, isWrappedErr)
	if left := countReturns(got, isIdent("err")); left > 0 {
		return fail("%d of %d errors are still returned bare", left, bare)
	}
	if wrapped != bare {
		return fail("%d errors wrapped with %%w, want %d", wrapped, bare)
	}
	g.Evidence = append(g.Evidence, fmt.Sprintf("%d of %d errors wrapped with fmt.Errorf and %%w", wrapped, bare))
	unwrapReturns(got)
	if render(got.Body) != render(want.Body) {
		return fail("something besides the returned errors changed")
	}
	g.Evidence = append(g.Evidence, "nothing else changed")
	g.Passed = true
	return g
}

func parseLoad(src string) (*ast.FuncDecl, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "load.go", "package store\n\n"+src, 0)
	if err != nil {
		return nil, err
	}
	var fn *ast.FuncDecl
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != "Load" || fd.Recv != nil || fn != nil {
			return nil, fmt.Errorf("want exactly one declaration, func Load")
		}
		fn = fd
	}
	if fn == nil {
		return nil, fmt.Errorf("no func Load")
	}
	if fn.Body == nil {
		// It parses (Go declares an assembly function so), but there is nothing to compare.
		return nil, fmt.Errorf("func Load has no body")
	}
	return fn, nil
}

func render(n ast.Node) string {
	var b bytes.Buffer
	_ = printer.Fprint(&b, token.NewFileSet(), n)
	return b.String()
}

func isIdent(name string) func(ast.Expr) bool {
	return func(e ast.Expr) bool {
		id, ok := e.(*ast.Ident)
		return ok && id.Name == name
	}
}

// isWrappedErr matches fmt.Errorf("... %w ...", ..., err).
func isWrappedErr(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok || len(call.Args) < 2 {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Errorf" || !isIdent("fmt")(sel.X) {
		return false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	format, err := strconv.Unquote(lit.Value)
	if err != nil || strings.Count(format, "%w") != 1 {
		return false
	}
	return isIdent("err")(call.Args[len(call.Args)-1])
}

func countReturns(fn *ast.FuncDecl, match func(ast.Expr) bool) int {
	n := 0
	ast.Inspect(fn.Body, func(node ast.Node) bool {
		if r, ok := node.(*ast.ReturnStmt); ok && len(r.Results) > 0 && match(r.Results[len(r.Results)-1]) {
			n++
		}
		return true
	})
	return n
}

// unwrapReturns turns every wrapped error back into a bare err, so the rest can be compared.
func unwrapReturns(fn *ast.FuncDecl) {
	ast.Inspect(fn.Body, func(node ast.Node) bool {
		if r, ok := node.(*ast.ReturnStmt); ok && len(r.Results) > 0 && isWrappedErr(r.Results[len(r.Results)-1]) {
			r.Results[len(r.Results)-1] = ast.NewIdent("err")
		}
		return true
	})
}

func codifyTask() Task {
	prompt := "Turn these review notes into a skill file for a pack, as Markdown:\n\n" + codifyFixture + "\n" +
		"The file starts with front matter between --- lines holding `name:` (lower-case words joined by dashes) and " +
		"`description:` (one sentence that says when to use the skill). Then three sections, headed exactly " +
		"`## When to use`, `## Rules` and `## Checks`. Every rule from the notes appears under Rules. Reply with the file only."
	return Task{ID: "codify", Prompt: prompt, Fixture: codifyFixture, PredicateVersion: "codify/1", Grade: gradeCodify}
}

// codifyRules are the terms each rule of the notes cannot be written without.
var codifyRules = []struct{ rule, term string }{
	{"wrap errors", "%w"},
	{"table-driven tests", "table-driven"},
	{"gofmt before commit", "gofmt"},
	{"no timed assertions", "-bench"},
}

// gradeCodify checks the front matter (its name through locum's own pack schema), the sections
// and that every rule of the notes made it in.
func gradeCodify(answer string) Grade {
	var g Grade
	fail := func(format string, args ...any) Grade {
		g.Evidence = append(g.Evidence, "FAIL "+fmt.Sprintf(format, args...))
		return g
	}
	text := strings.TrimSpace(answer)
	if blocks, err := scope.FencedBlocks(text); err == nil && len(blocks) == 1 && strings.HasPrefix(text, "```") {
		text = strings.TrimSpace(blocks[0])
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return fail("no front matter: the file must start with ---")
	}
	front, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		return fail("the front matter is not closed with ---")
	}
	fields := map[string]string{}
	for _, line := range strings.Split(front, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	name, desc := fields["name"], fields["description"]
	if name == "" {
		return fail("the front matter has no name")
	}
	v, err := schema.New()
	if err != nil {
		return fail("schema: %v", err)
	}
	doc := map[string]any{"portulan": map[string]any{"pack": "1.0"}, "name": name, "category": "tools", "contributes": map[string]any{}}
	if err := v.ValidateValue(schema.Pack, "skill", doc); err != nil {
		return fail("name %q fails locum's pack schema: %v", name, err)
	}
	g.Evidence = append(g.Evidence, fmt.Sprintf("name %q passes the pack schema", name))
	if desc == "" || !strings.Contains(strings.ToLower(desc), "use") {
		return fail("the description does not say when to use the skill")
	}
	g.Evidence = append(g.Evidence, "description says when to use it")
	for _, h := range []string{"## When to use", "## Rules", "## Checks"} {
		if !hasHeading(body, h) {
			return fail("no %q section", h)
		}
	}
	g.Evidence = append(g.Evidence, "sections When to use, Rules, Checks")
	rules := section(body, "## Rules")
	for _, r := range codifyRules {
		if !strings.Contains(strings.ToLower(rules), strings.ToLower(r.term)) {
			return fail("the rule %q is missing from Rules (no %q)", r.rule, r.term)
		}
	}
	g.Evidence = append(g.Evidence, fmt.Sprintf("all %d rules under Rules", len(codifyRules)))
	g.Passed = true
	return g
}

func hasHeading(body, h string) bool {
	for _, line := range strings.Split(body, "\n") {
		if strings.TrimSpace(line) == h {
			return true
		}
	}
	return false
}

// section returns the text under heading h, up to the next heading of the same level.
func section(body, h string) string {
	var out []string
	in := false
	for _, line := range strings.Split(body, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "## ") {
			in = t == h
			continue
		}
		if in {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// HandoffBudget is the most bytes a handoff may take.
const HandoffBudget = 700

// handoffFacts are what a handoff cannot drop, each with the spellings that keep it.
var handoffFacts = []struct {
	fact  string
	terms []string
}{
	{"the branch", []string{"fix/journal-rotation"}},
	{"the decision to keep 200 journals", []string{"200"}},
	{"the failing test", []string{"TestListRunsEmptyDir"}},
	{"the next step", []string{"missing dir"}},
	{"that nothing is committed", []string{"nothing committed", "not committed", "uncommitted", "no commit"}},
}

func handoffTask() Task {
	prompt := fmt.Sprintf("Compress this session log into a handoff for the next session, in at most %d bytes of plain text. "+
		"Keep the branch, the decision taken, the failing test, whether anything is committed, and the next step. "+
		"Reply with the handoff only.\n\n%s", HandoffBudget, handoffFixture)
	return Task{ID: "handoff", Prompt: prompt, Fixture: handoffFixture, PredicateVersion: "handoff/1", Grade: gradeHandoff}
}

func gradeHandoff(answer string) Grade {
	var g Grade
	text := strings.TrimSpace(answer)
	if n := len(text); n == 0 || n > HandoffBudget {
		g.Evidence = append(g.Evidence, fmt.Sprintf("FAIL %d bytes, want 1 to %d", n, HandoffBudget))
		return g
	}
	g.Evidence = append(g.Evidence, fmt.Sprintf("%d bytes, within %d", len(text), HandoffBudget))
	lower := strings.ToLower(text)
	for _, f := range handoffFacts {
		kept := false
		for _, t := range f.terms {
			if strings.Contains(lower, strings.ToLower(t)) {
				kept = true
			}
		}
		if !kept {
			g.Evidence = append(g.Evidence, "FAIL drops "+f.fact)
			return g
		}
	}
	g.Evidence = append(g.Evidence, fmt.Sprintf("keeps all %d facts", len(handoffFacts)))
	g.Passed = true
	return g
}

package editcheck

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
)

// A guard names what an edit may change. The check runs on the whole file before and after the
// edit, so it holds whatever the span was.
const (
	// GuardSpan lets an edit change anything in its span; nothing is checked here.
	GuardSpan = "span"
	// GuardComments lets an edit change comments only: the file less its comments is unchanged.
	GuardComments = "comments"
	// GuardSignature lets an edit change function bodies and imports only: every declaration's
	// signature and every type, var and const declaration are unchanged but for comments.
	GuardSignature = "signature"
)

// Guards lists every guard, the default first.
var Guards = []string{GuardSpan, GuardComments, GuardSignature}

// GuardDoc is a guard's one-line description, as --help shows it; "" for an unknown guard.
func GuardDoc(g string) string {
	switch g {
	case GuardSpan:
		return "the edit may change anything in its span; only the verify judges it."
	case GuardComments:
		return "the edit may change comments only: the Go file less its comments must stay the same, token for token (for documenting code)."
	case GuardSignature:
		return "the edit may change function bodies and imports only: each declaration's signature, and every type, var and const, must stay the same but for comments (for tidying code)."
	}
	return ""
}

// GuardError is an edit that goes past its guard.
type GuardError struct {
	Guard string
	// Reason is the first difference found, for the journal.
	Reason string
	// Retry is what to tell the model on the retry.
	Retry string
}

func (e *GuardError) Error() string { return fmt.Sprintf("guard %s: %s", e.Guard, e.Reason) }

// UnsupportedError is a guard that cannot be checked on a file: an unknown guard, a file that is
// not Go, a file over MaxFileBytes, or, for the signature guard, a file that does not parse. The
// caller learns it from Supported before it sends any request.
type UnsupportedError struct {
	Guard  string
	Name   string
	Reason string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("guard %s cannot be checked on %s: %s", e.Guard, e.Name, e.Reason)
}

// Supported is nil when guard can be checked on the file name holding before, and an
// *UnsupportedError when it cannot. The span guard is supported on every file.
func Supported(guard, name string, before []byte) error {
	switch guard {
	case GuardSpan:
		return nil
	case GuardComments, GuardSignature:
	default:
		return &UnsupportedError{Guard: guard, Name: name, Reason: "no such guard; the guards are " + strings.Join(Guards, ", ")}
	}
	if strings.ToLower(filepath.Ext(name)) != ".go" {
		return &UnsupportedError{Guard: guard, Name: name, Reason: "only Go files can be checked; use the span guard"}
	}
	if len(before) > MaxFileBytes {
		return &UnsupportedError{Guard: guard, Name: name, Reason: fmt.Sprintf("the file is %d bytes, over the %d a guard reads", len(before), MaxFileBytes)}
	}
	if guard == GuardSignature {
		if _, err := parser.ParseFile(token.NewFileSet(), "", before, parser.SkipObjectResolution); err != nil {
			return &UnsupportedError{Guard: guard, Name: name, Reason: "the file does not parse as Go (" + firstError(err, 0) + ")"}
		}
	}
	return nil
}

// CheckGuard checks that the edit of the file name from before to after stays within guard: nil
// when it does, a *GuardError naming the first difference found (which declaration, what of it,
// its line in after) when it does not, and an *UnsupportedError when Supported refuses.
//
// Under comments, the two files' tokens less comments must be equal (tokens.go says what a
// reformatting may move), and the edit may not make a file that parsed fail to. Under signature,
// both files must parse; the top-level declarations (a function by name, a method by receiver
// type and name, a type, var or const block by kind and first name) must be the same set, in any
// order; each function's signature (receiver, type parameters, parameters with their names,
// results) must be the same tokens; each type, var and const declaration the same tokens; the
// package clause the same. Imports may change, since a new body may need one. Comparing tokens
// rather than printed syntax keeps a removed comment from counting: go/printer places line
// breaks from positions, which a comment moves.
func CheckGuard(guard, name string, before, after []byte) error {
	if err := Supported(guard, name, before); err != nil {
		return err
	}
	if guard == GuardSpan {
		return nil
	}
	if len(after) > MaxFileBytes {
		return guardError(guard, fmt.Sprintf("the edit makes the file %d bytes, over the %d a guard reads", len(after), MaxFileBytes), "made the file far longer")
	}
	b, a := load(before), load(after)
	if b.file != nil && a.file == nil {
		where := firstError(a.err, 0)
		return guardError(guard, "the edit made the file fail to parse ("+where+")", "made the file fail to parse ("+where+")")
	}
	if guard == GuardComments {
		i := firstDiff(b.toks, a.toks)
		if i < 0 {
			return nil
		}
		if b.file == nil {
			what := fmt.Sprintf("changed code (line %d)", a.lineOfTok(a.toks, i))
			return guardError(guard, "the edit "+what, what)
		}
	}
	if what := explain(b, a, guard == GuardSignature); what != "" {
		return guardError(guard, "the edit "+what, what)
	}
	if guard == GuardComments {
		// explain compares declarations one by one; what is left is an order.
		i := firstDiff(b.toks, a.toks)
		what := fmt.Sprintf("moved code (line %d)", a.lineOfTok(a.toks, i))
		if d, ok := a.declAt(a.toks, i); ok {
			what = fmt.Sprintf("moved %s (line %d)", d.noun(), a.lineOfTok(a.toks, i))
		}
		return guardError(guard, "the edit "+what, what)
	}
	return nil
}

func guardError(guard, reason, what string) *GuardError {
	e := &GuardError{Guard: guard, Reason: reason + ", outside the " + guard + " guard"}
	switch guard {
	case GuardComments:
		e.Retry = "Change only comments: your edit " + what + "."
	default:
		e.Retry = "Change only function bodies, keeping every signature and every other declaration as it is: your edit " + what + "."
	}
	return e
}

// source is one side of an edit, scanned and, where it parses, parsed.
type source struct {
	src   []byte
	toks  []tok
	file  *ast.File
	tfile *token.File
	err   error
	decls []keyed
}

// keyed is a top-level declaration other than an import, with the key that matches it across
// the edit: its kind and name, and which of that kind and name it is (init, _).
type keyed struct {
	decl
	key string
}

func load(src []byte) *source {
	s := &source{src: src, toks: tokens(src)}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		s.err = err
		return s
	}
	s.file, s.tfile = f, fset.File(f.Package)
	seen := map[string]int{}
	for _, n := range f.Decls {
		d, ok := describe(n)
		if !ok {
			d = decl{kind: "declaration", name: "?", node: n}
			if g, isGen := n.(*ast.GenDecl); isGen {
				d.kind, d.grouped = g.Tok.String(), true
			}
		}
		if d.kind == kindImport {
			continue
		}
		k := d.kind + " " + d.name
		seen[k]++
		s.decls = append(s.decls, keyed{decl: d, key: fmt.Sprintf("%s #%d", k, seen[k])})
	}
	return s
}

func (s *source) off(p token.Pos) int {
	if s.tfile == nil || !p.IsValid() {
		return 0
	}
	return s.tfile.Offset(p)
}

func (s *source) line(off int) int {
	off = max(0, min(off, len(s.src)))
	return bytes.Count(s.src[:off], []byte("\n")) + 1
}

// lineOfTok is the line of ts[i], or of the last token when i is past the end.
func (s *source) lineOfTok(ts []tok, i int) int {
	switch {
	case i >= 0 && i < len(ts):
		return s.line(ts[i].off)
	case len(ts) > 0:
		return s.line(ts[len(ts)-1].off)
	}
	return s.line(len(s.src))
}

// declAt is the declaration that holds ts[i].
func (s *source) declAt(ts []tok, i int) (keyed, bool) {
	if i < 0 || i >= len(ts) {
		return keyed{}, false
	}
	for _, d := range s.decls {
		if s.off(d.node.Pos()) <= ts[i].off && ts[i].off < s.off(d.node.End()) {
			return d, true
		}
	}
	return keyed{}, false
}

func (s *source) toksIn(from, to token.Pos) []tok {
	return within(s.toks, s.off(from), s.off(to))
}

// imports is the tokens of every import declaration.
func (s *source) imports() []tok {
	var out []tok
	for _, n := range s.file.Decls {
		if g, ok := n.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			out = append(out, s.toksIn(g.Pos(), g.End())...)
		}
	}
	return out
}

// explain finds the first difference between b and a that a guard refuses, in a's order, as the
// model should hear it: "changed the body of the function `Add` (line 14)". Bodies may change
// when bodies is set, imports too. "" when it finds none.
func explain(b, a *source, bodies bool) string {
	if a.file == nil || b.file == nil {
		return ""
	}
	bt, at := b.toksIn(b.file.Package, b.file.Name.End()), a.toksIn(a.file.Package, a.file.Name.End())
	if i := firstDiff(bt, at); i >= 0 {
		return fmt.Sprintf("changed the package clause (line %d)", a.lineOfTok(at, i))
	}
	if !bodies {
		bt, at := b.imports(), a.imports()
		if i := firstDiff(bt, at); i >= 0 {
			return fmt.Sprintf("changed the imports (line %d)", a.lineOfTok(at, i))
		}
	}
	before := map[string]keyed{}
	for _, d := range b.decls {
		before[d.key] = d
	}
	after := map[string]bool{}
	for _, d := range a.decls {
		after[d.key] = true
		old, ok := before[d.key]
		if !ok {
			return fmt.Sprintf("added %s (line %d)", d.noun(), a.line(a.off(d.node.Pos())))
		}
		if what := changed(b, a, old, d, bodies); what != "" {
			return what
		}
	}
	for _, d := range b.decls {
		if !after[d.key] {
			return fmt.Sprintf("removed %s (line %d before the edit)", d.noun(), b.line(b.off(d.node.Pos())))
		}
	}
	return ""
}

// changed compares one declaration across the edit.
func changed(b, a *source, old, d keyed, bodies bool) string {
	of, oldFunc := old.node.(*ast.FuncDecl)
	nf, newFunc := d.node.(*ast.FuncDecl)
	if !oldFunc || !newFunc {
		bt, at := b.toksIn(old.node.Pos(), old.node.End()), a.toksIn(d.node.Pos(), d.node.End())
		if i := firstDiff(bt, at); i >= 0 {
			return fmt.Sprintf("changed %s (line %d)", d.noun(), a.lineOfTok(at, i))
		}
		return ""
	}
	bs, as := b.toksIn(of.Pos(), bodyStart(of)), a.toksIn(nf.Pos(), bodyStart(nf))
	if i := firstDiff(bs, as); i >= 0 {
		return fmt.Sprintf("changed the signature of %s (line %d)", d.noun(), a.lineOfTok(as, i))
	}
	if bodies {
		return ""
	}
	bb, ab := b.toksIn(bodyStart(of), of.End()), a.toksIn(bodyStart(nf), nf.End())
	if i := firstDiff(bb, ab); i >= 0 {
		if of.Body == nil || nf.Body == nil {
			return fmt.Sprintf("added or removed the body of %s (line %d)", d.noun(), a.line(a.off(nf.Pos())))
		}
		return fmt.Sprintf("changed the body of %s (line %d)", d.noun(), a.lineOfTok(ab, i))
	}
	return ""
}

// bodyStart is where a function's signature ends: its body's brace, or its end without one.
func bodyStart(f *ast.FuncDecl) token.Pos {
	if f.Body != nil {
		return f.Body.Lbrace
	}
	return f.End()
}

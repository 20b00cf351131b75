// Package editcheck holds pure checks on Go source that a transform runs on a model's edit before
// it writes it and before any verify: whether a reply for one declaration is one declaration of
// the same kind and name (DeclShape), and whether an edit stays within what a job lets it change
// (CheckGuard). A compiler's error is a poor lesson for a small model, so each refusal carries a
// Retry that says, in the model's terms, what to send instead.
//
// Everything checked here is untrusted: no input makes it panic, and its work is bounded by
// MaxReplyBytes and MaxFileBytes.
package editcheck

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"strings"
)

const (
	// MaxReplyBytes is the largest reply DeclShape reads; a larger one is refused.
	MaxReplyBytes = 256 << 10
	// MaxFileBytes is the largest file (or span) the checks read.
	MaxFileBytes = 1 << 20
)

// ShapeError is a reply that is not one declaration of the span's kind and name.
type ShapeError struct {
	// Reason is what was wrong, for the journal.
	Reason string
	// Retry is what to tell the model on the retry: what to send, and what it sent instead.
	Retry string
}

func (e *ShapeError) Error() string { return "reply shape: " + e.Reason }

// spanDecl is the declaration a span holds, and how to name its first line to the model.
type spanDecl struct {
	decl
	// inBlock is one type of a grouped type block, without the type keyword: the span
	// --symbol gives for such a type.
	inBlock bool
	// head is how the declaration begins, as the model is told to begin it: "func Average(".
	head string
}

// IsDecl reports whether span is exactly one Go declaration, with any comments around it, and
// which: kind is "func", "method", "type", "var" or "const"; name is the function's or type's,
// a method's as its receiver type and name without pointer or type parameters ("Cache.Add" for
// func (c *Cache[K]) Add, as locum's --symbol names it), and a var or const block's first name.
// One type of a grouped type block, as --symbol gives it (`Key string`, no keyword), is a "type".
// A line range holding a fragment, two declarations or an import is not one.
func IsDecl(span string) (kind, name string, ok bool) {
	d, ok := parseSpan(span)
	return d.kind, d.name, ok
}

func parseSpan(span string) (spanDecl, bool) {
	if len(span) > MaxFileBytes {
		return spanDecl{}, false
	}
	if f, err := parseFragment(span); err == nil {
		if len(f.Decls) != 1 {
			return spanDecl{}, false
		}
		d, ok := describe(f.Decls[0])
		if !ok || d.kind == kindImport {
			return spanDecl{}, false
		}
		return spanDecl{decl: d, head: head(span, d)}, true
	}
	if d, ok := parseBlockType(span); ok {
		return spanDecl{decl: d, inBlock: true, head: d.name + " "}, true
	}
	return spanDecl{}, false
}

// fragmentPrefix makes a fragment of declarations a file; its one line is taken off every line
// number reported.
const fragmentPrefix = "package p\n"

func parseFragment(src string) (*ast.File, error) {
	return parser.ParseFile(token.NewFileSet(), "", fragmentPrefix+src, parser.ParseComments|parser.SkipObjectResolution)
}

// parseBlockType reads src as one type of a grouped type block.
func parseBlockType(src string) (decl, bool) {
	f, err := parser.ParseFile(token.NewFileSet(), "", fragmentPrefix+"type (\n"+src+"\n)", parser.SkipObjectResolution)
	if err != nil || len(f.Decls) != 1 {
		return decl{}, false
	}
	g, ok := f.Decls[0].(*ast.GenDecl)
	if !ok || len(g.Specs) != 1 {
		return decl{}, false
	}
	d, ok := describe(g)
	d.grouped = false
	return d, ok
}

// isFragment reports whether src reads as statements of a function body.
func isFragment(src string) bool {
	f, err := parser.ParseFile(token.NewFileSet(), "", fragmentPrefix+"func _() {\n"+src+"\n}", parser.SkipObjectResolution)
	if err != nil || len(f.Decls) != 1 {
		return false
	}
	fn, ok := f.Decls[0].(*ast.FuncDecl)
	return ok && fn.Body != nil && len(fn.Body.List) > 0
}

// head is the text a declaration starts with, as the model should start its reply: up to the
// name and the bracket after it for a function, up to the name for the others. A head split
// over lines is named by its keyword and name instead.
func head(span string, d decl) string {
	src := fragmentPrefix + span
	switch n := d.node.(type) {
	case *ast.FuncDecl:
		from, to := int(n.Pos())-1, int(n.Name.End())-1
		h := n.Name.Name
		if from >= 0 && to <= len(src) && from < to {
			h = src[from:to]
		}
		if strings.Contains(h, "\n") {
			h = "func " + n.Name.Name
		}
		if n.Type.TypeParams != nil {
			return h + "["
		}
		return h + "("
	case *ast.GenDecl:
		if d.grouped {
			return d.kind + " ("
		}
		return d.kind + " " + d.name
	}
	return d.kind + " " + d.name
}

// whole is the instruction to send the declaration whole: "the whole function `Average`, from
// `func Average(` to its closing brace".
func (s spanDecl) whole() string {
	end := "to its end"
	switch {
	case s.kind == KindFunc || s.kind == KindMethod:
		end = "to its closing brace"
	case s.grouped:
		end = "to its closing parenthesis"
	}
	if s.inBlock {
		return fmt.Sprintf("the whole type `%s` as it stands in its `type ( ... )` block, without the `type` keyword, from `%s` %s", s.name, s.head, end)
	}
	return fmt.Sprintf("the whole %s, from `%s` %s", strings.TrimPrefix(s.noun(), "the "), s.head, end)
}

// DeclShape checks that reply, the model's new text for span (the declaration's old text, doc
// comment included), is one declaration of the same kind and name; nil when it is, and when span
// is not one declaration (IsDecl), on which it has no opinion. Otherwise it is a *ShapeError: a
// fragment of statements, only comments, code that does not parse, another kind or name, more
// than one declaration, or a block turned into a single declaration or back. The reply is read as
// a file fragment: the caller strips a code fence first.
func DeclShape(span, reply string) error {
	want, ok := parseSpan(span)
	if !ok {
		return nil
	}
	if len(reply) > MaxReplyBytes {
		return &ShapeError{
			Reason: fmt.Sprintf("the reply is %d bytes, over the %d a reply may be", len(reply), MaxReplyBytes),
			Retry:  fmt.Sprintf("Send only %s, with your change in it; your reply was far longer than the span.", want.whole()),
		}
	}
	if strings.TrimSpace(reply) == "" {
		return &ShapeError{
			Reason: "the reply is empty: it would delete " + want.noun(),
			Retry:  fmt.Sprintf("Send %s, with your change in it; your reply was empty.", want.whole()),
		}
	}
	if want.inBlock {
		if got, ok := parseBlockType(reply); ok {
			return compare(want, got)
		}
	}
	f, err := parseFragment(reply)
	if err != nil {
		return unparsed(want, reply, err)
	}
	var got []decl
	for _, d := range f.Decls {
		if g, ok := describe(d); ok {
			got = append(got, g)
		} else {
			got = append(got, decl{kind: "declaration", name: "?"})
		}
	}
	switch len(got) {
	case 0:
		if len(f.Comments) > 0 {
			return &ShapeError{
				Reason: "the reply is only a comment: it would delete " + want.noun(),
				Retry:  fmt.Sprintf("Send your comment followed by %s, with your change in it; you sent only a comment, which would delete the %s.", want.whole(), kindWord(want.kind)),
			}
		}
		return &ShapeError{
			Reason: "the reply holds no declaration: it would delete " + want.noun(),
			Retry:  fmt.Sprintf("Send %s, with your change in it; your reply held no declaration.", want.whole()),
		}
	case 1:
		if want.inBlock {
			return &ShapeError{
				Reason: fmt.Sprintf("the reply is %s with its keyword, but the span is one type of a `type ( ... )` block", got[0].noun()),
				Retry:  fmt.Sprintf("Send %s; you sent a declaration of its own, which cannot stand inside the block.", want.whole()),
			}
		}
		return compare(want, got[0])
	}
	var others []string
	named := false
	for _, g := range got {
		if g.kind == want.kind && g.name == want.name && !named {
			named = true
			continue
		}
		others = append(others, g.short())
	}
	if named {
		return &ShapeError{
			Reason: fmt.Sprintf("the reply holds %d declarations: %s and also %s", len(got), want.noun(), strings.Join(others, ", ")),
			Retry:  fmt.Sprintf("Send only %s, with your change in it; your reply also held %s, which is outside the span: leave it as it is.", want.whole(), strings.Join(others, ", ")),
		}
	}
	return &ShapeError{
		Reason: fmt.Sprintf("the reply holds %d declarations and none is %s: %s", len(got), want.noun(), strings.Join(others, ", ")),
		Retry:  fmt.Sprintf("Send %s, with your change in it, and nothing else; you sent %s instead.", want.whole(), strings.Join(others, ", ")),
	}
}

// compare checks one declaration of the reply against the span's.
func compare(want spanDecl, got decl) error {
	switch {
	case got.kind != want.kind:
		return &ShapeError{
			Reason: fmt.Sprintf("the reply is %s, not %s: another kind of declaration", got.noun(), want.noun()),
			Retry:  fmt.Sprintf("Send %s, with your change in it; it must stay a %s: you sent %s.", want.whole(), kindWord(want.kind), got.noun()),
		}
	case got.name != want.name:
		return &ShapeError{
			Reason: fmt.Sprintf("the reply declares %s, not %s: another declaration or a rename", got.noun(), want.noun()),
			Retry:  fmt.Sprintf("Send %s, with your change in it and its name unchanged; you sent %s.", want.whole(), got.noun()),
		}
	case got.grouped != want.grouped:
		if want.grouped {
			return &ShapeError{
				Reason: fmt.Sprintf("the reply is a single %s declaration, but the span is %s", got.kind, want.noun()),
				Retry:  fmt.Sprintf("Send %s, every name of the block in it, with your change; you sent a single declaration.", want.whole()),
			}
		}
		return &ShapeError{
			Reason: fmt.Sprintf("the reply is a `%s ( ... )` block, but the span is %s", got.kind, want.noun()),
			Retry:  fmt.Sprintf("Send %s as a single declaration, not a block, with your change in it.", want.whole()),
		}
	}
	return nil
}

// unparsed explains a reply that is not a file fragment: statements of a body, or not Go at all.
func unparsed(want spanDecl, reply string, err error) error {
	if isFragment(reply) {
		n := len(strings.Split(strings.TrimSpace(reply), "\n"))
		what := fmt.Sprintf("%d lines", n)
		if n == 1 {
			what = "1 line"
		}
		if want.kind == KindFunc || want.kind == KindMethod {
			return &ShapeError{
				Reason: fmt.Sprintf("the reply is %s of a function body, not a declaration", what),
				Retry:  fmt.Sprintf("Send %s, with your change in it; you sent %s of its body.", want.whole(), what),
			}
		}
		return &ShapeError{
			Reason: fmt.Sprintf("the reply is %s of statements, not a declaration", what),
			Retry:  fmt.Sprintf("Send %s, with your change in it; you sent %s of statements.", want.whole(), what),
		}
	}
	where := firstError(err, 1)
	return &ShapeError{
		Reason: "the reply does not parse as Go: " + where,
		Retry:  fmt.Sprintf("Your reply does not parse as Go (%s). Send %s, with your change in it.", where, want.whole()),
	}
}

// firstError is a parse error's first message with its line, less the lines prepended.
func firstError(err error, prepended int) string {
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		line := list[0].Pos.Line - prepended
		if line < 1 {
			line = 1
		}
		return fmt.Sprintf("line %d: %s", line, list[0].Msg)
	}
	return err.Error()
}

func kindWord(kind string) string {
	switch kind {
	case KindFunc:
		return "function"
	case KindMethod:
		return "method"
	case "":
		return "declaration"
	}
	return kind
}

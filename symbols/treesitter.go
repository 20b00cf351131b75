//go:build cgo

package symbols

import (
	"fmt"
	"sort"
	"strings"
	"unsafe"

	ts "github.com/tree-sitter/go-tree-sitter"
	tsjavascript "github.com/tree-sitter/tree-sitter-javascript/bindings/go"
	tspython "github.com/tree-sitter/tree-sitter-python/bindings/go"
	tsrust "github.com/tree-sitter/tree-sitter-rust/bindings/go"
	tstypescript "github.com/tree-sitter/tree-sitter-typescript/bindings/go"
)

// CgoBuild says this build parses the tree-sitter languages.
const CgoBuild = true

// grammars are the parsers' tables, each the grammar module's own.
var grammars = map[grammar]func() unsafe.Pointer{
	python:     tspython.Language,
	typescript: tstypescript.LanguageTypescript,
	tsx:        tstypescript.LanguageTSX,
	javascript: tsjavascript.Language,
	rust:       tsrust.Language,
}

// chunk is how much of the source the parser is handed at a time. The binding copies each
// piece it hands the parser into C memory and frees them all only when the parse ends, and the
// parser asks again from an earlier offset whenever it backtracks or a scanner asks a column:
// handed the rest of the file each time, a parse would hold a copy of the file's tail per
// question. On 870 KB of Python, 64 KiB pieces took 54 MB at peak against 74 MB for the
// rest of the file, in about the same time.
const chunk = 64 << 10

// treeFile is a parsed file and what finding spans in it needs.
type treeFile struct {
	src    []byte
	cursor *ts.TreeCursor
	// newlines are the offsets of src's line feeds, for a byte's line.
	newlines []int
	// prefix says whether a node belongs to the declaration after it (a comment, and the
	// decorators or attributes a grammar leaves beside the declaration), and whether it does
	// across a blank line, as a doc comment of a language that marks its doc comments does.
	prefix func(*ts.Node) (belongs, acrossBlank bool)
}

// raw is a declaration as a grammar's collector finds it.
type raw struct {
	name string
	also []string
	kind string
	// at is the declaration's outermost node (its export statement, its decorators); siblings
	// are the nodes of its parent, at[index] being at, for its doc comment.
	siblings []ts.Node
	index    int
	// overload is a TypeScript overload signature: it joins the declaration of its name that
	// follows it.
	overload bool
}

func treeDecls(lang *Language, name string, src []byte) ([]Decl, error) {
	if len(src) > MaxBytes {
		return nil, &TooLargeError{Size: len(src), Max: MaxBytes}
	}
	p := ts.NewParser()
	defer p.Close()
	if err := p.SetLanguage(ts.NewLanguage(grammars[lang.grammar]())); err != nil {
		// The grammars' ABI versions are pinned with the binding; a test loads each.
		return nil, fmt.Errorf("the %s grammar: %w", lang.Name, err)
	}
	tree := p.ParseWithOptions(func(at int, _ ts.Point) []byte {
		if at >= len(src) {
			return nil
		}
		return src[at:min(len(src), at+chunk)]
	}, nil, nil)
	if tree == nil {
		return nil, fmt.Errorf("the %s parser returned no tree for %s", lang.Name, name)
	}
	defer tree.Close()
	root := tree.RootNode()
	cursor := root.Walk()
	defer cursor.Close()
	if bad := firstError(root, cursor); bad != nil {
		return nil, syntaxError(lang, bad, src)
	}
	t := &treeFile{src: src, cursor: cursor, prefix: func(n *ts.Node) (bool, bool) { return isComment(n), false }}
	for i, b := range src {
		if b == '\n' {
			t.newlines = append(t.newlines, i)
		}
	}
	var found []raw
	switch lang.grammar {
	case python:
		found = t.python(root)
	case typescript, tsx, javascript:
		// A JSDoc comment (/** */) documents what follows it, a blank line between or not.
		t.prefix = func(n *ts.Node) (bool, bool) {
			if n.Kind() == "decorator" {
				return true, true
			}
			text := t.text(n)
			return isComment(n), strings.HasPrefix(text, "/**") && text != "/**/"
		}
		found = t.script(root)
	case rust:
		// An outer doc comment (///, /** */) and an attribute apply to the item after them, a
		// blank line between or not; an inner one (//!) to what holds it.
		t.prefix = func(n *ts.Node) (bool, bool) {
			if n.Kind() == "attribute_item" {
				return true, true
			}
			if !isComment(n) || n.ChildByFieldName("inner") != nil {
				return false, false
			}
			return true, n.ChildByFieldName("outer") != nil
		}
		found = t.rust(root)
	}
	return t.spans(found), nil
}

// spans turns what a collector found into declarations with their lines, each overload
// signature joined to the declaration of its name after it.
func (t *treeFile) spans(found []raw) []Decl {
	out := make([]Decl, 0, len(found))
	overload := false
	for _, r := range found {
		at := &r.siblings[r.index]
		d := Decl{Name: r.name, Also: r.also, Kind: r.kind, Start: t.line(t.spanStart(r.siblings, r.index)), End: t.line(t.lastByte(contentEnd(at)))}
		if n := len(out); n > 0 && overload && out[n-1].Name == d.Name {
			d.Start = out[n-1].Start
			out = out[:n-1]
		}
		out = append(out, d)
		overload = r.overload
	}
	return out
}

// line is the 1-based line of the byte at offset b.
func (t *treeFile) line(b uint) int {
	return sort.SearchInts(t.newlines, int(b)) + 1
}

// lastByte is the offset of the last byte before end that is not white space, end-1 if none.
func (t *treeFile) lastByte(end uint) uint {
	for i := end; i > 0; i-- {
		if !isSpace(t.src[i-1]) {
			return i - 1
		}
	}
	return max(end, 1) - 1
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v'
}

// lineStart is the offset of the start of the line holding offset b.
func (t *treeFile) lineStart(b uint) uint {
	i := sort.SearchInts(t.newlines, int(b))
	if i == 0 {
		return 0
	}
	return uint(t.newlines[i-1] + 1)
}

// blank says whether src[from:to] is white space alone.
func (t *treeFile) blank(from, to uint) bool {
	for _, b := range t.src[from:to] {
		if !isSpace(b) {
			return false
		}
	}
	return true
}

// indent is the width of the leading white space of the line holding offset b.
func (t *treeFile) indent(b uint) uint {
	i := t.lineStart(b)
	j := i
	for j < uint(len(t.src)) && (t.src[j] == ' ' || t.src[j] == '\t') {
		j++
	}
	return j - i
}

// spanStart is where the declaration siblings[i] begins with its doc comment: the comments (and
// decorators or attributes a grammar leaves outside it) right above it, each at its
// indentation, with no blank line between, as Go's doc comment is the comment group touching its
// declaration; a doc comment of a language that marks them (JSDoc's /**, Rust's ///) and an
// attribute or decorator across blank lines too, as that language's tools read them. A comment
// that ends a line of code, or that is indented as the body above is, is not its doc.
func (t *treeFile) spanStart(siblings []ts.Node, i int) uint {
	at := siblings[i].StartByte()
	ind := t.indent(at)
	best := at
	cur := at
	for j := i - 1; j >= 0; j-- {
		s := &siblings[j]
		belongs, acrossBlank := t.prefix(s)
		if !belongs || s.EndByte() > cur || !t.blank(s.EndByte(), cur) {
			break
		}
		if !acrossBlank && t.line(cur)-t.line(t.lastByte(s.EndByte())) > 1 {
			break // a blank line between
		}
		cur = s.StartByte()
		if t.blank(t.lineStart(cur), cur) {
			if cur-t.lineStart(cur) != ind {
				break
			}
			best = cur
		}
	}
	return best
}

// contentEnd is where a declaration's own text ends: its last token that is not a comment. A
// grammar may put the comments after a body, above the next declaration, inside it.
func contentEnd(n *ts.Node) uint {
	for {
		var last *ts.Node
		for i := n.ChildCount(); i > 0; i-- {
			c := n.Child(i - 1)
			if c != nil && !c.IsExtra() && c.EndByte() > c.StartByte() {
				last = c
				break
			}
		}
		if last == nil {
			return n.EndByte()
		}
		n = last
	}
}

func isComment(n *ts.Node) bool {
	return n.IsExtra() && strings.Contains(n.Kind(), "comment")
}

// firstError is the first ERROR or MISSING node of the tree in source order, nil when it has
// none: tree-sitter parses any text, marking what it could not read.
func firstError(root *ts.Node, cursor *ts.TreeCursor) *ts.Node {
	if !root.HasError() {
		return nil
	}
	n := root
	for {
		if n.IsError() || n.IsMissing() {
			return n
		}
		var next *ts.Node
		for _, c := range n.Children(cursor) {
			if c.IsError() || c.IsMissing() || c.HasError() {
				next = &c
				break
			}
		}
		if next == nil {
			return n
		}
		n = next
	}
}

// syntaxError says where the tree's first error is, and what: the text it could not read, or
// the token it found missing.
func syntaxError(lang *Language, n *ts.Node, src []byte) *SyntaxError {
	pos := n.StartPosition()
	e := &SyntaxError{Language: lang.Name, Line: int(pos.Row) + 1, Column: int(pos.Column) + 1}
	switch {
	case n.IsMissing():
		e.What = fmt.Sprintf("missing %q", n.Kind())
	default:
		text := strings.TrimSpace(string(src[n.StartByte():n.EndByte()]))
		text, _, cut := strings.Cut(text, "\n")
		if len(text) > 20 {
			text, cut = text[:20], true
		}
		switch {
		case text == "":
			e.What = "unexpected end of input"
		case cut:
			e.What = fmt.Sprintf("unexpected %q...", text)
		default:
			e.What = fmt.Sprintf("unexpected %q", text)
		}
	}
	return e
}

// text is the source of a node, "" for none.
func (t *treeFile) text(n *ts.Node) string {
	if n == nil {
		return ""
	}
	return string(t.src[n.StartByte():n.EndByte()])
}

// children are a node's children, comments and tokens included.
func (t *treeFile) children(n *ts.Node) []ts.Node {
	if n == nil {
		return nil
	}
	return n.Children(t.cursor)
}

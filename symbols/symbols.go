// Package symbols finds a source file's declarations by name, each as the lines a model edits as
// one unit: a function, a method named Type.method, a class, struct, trait or other type, a
// top-level constant, with its decorators or attributes and its doc comment. Go is read with
// go/parser; Python, TypeScript, JavaScript and Rust with tree-sitter, through its official Go
// binding and the grammars' own modules, which need cgo: a build without it refuses those
// languages with a *NoCgoError and reads Go as ever.
//
// Everything here reads untrusted source: no input makes it panic, a file that does not parse is
// a *SyntaxError naming its first error, and a tree-sitter file is read only up to MaxBytes. It
// imports nothing of locum's.
package symbols

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// MaxBytes is the largest file parsed with tree-sitter. A parse and its listing run at 4 to 8 MB/s
// on a 2-core machine (BenchmarkList), so this bounds one at about a quarter of a second; a
// declaration's span goes through a prompt's input budget besides, far below this.
const MaxBytes = 1 << 20

// Decl is one declaration and its span.
type Decl struct {
	// Name is the name that finds it: f, Class.method (Type.method for Go and Rust methods,
	// Outer.Inner.method for a Python class in a class), or the first name a Go const or var
	// block or a TypeScript const declares.
	Name string `json:"name"`
	// Also are the other names that find the same span: the rest of a block's names.
	Also []string `json:"also,omitempty"`
	// Kind is what it declares: function, method, class, interface, type, enum, struct, union,
	// trait, const, static, var or macro.
	Kind string `json:"kind"`
	// Start and End are its first and last lines, 1-based and inclusive, its decorators and doc
	// comment included.
	Start int `json:"start"`
	End   int `json:"end"`
	// Item says a workflow's for_each symbols runs over it: it holds no other declaration
	// listed, so no two items' spans overlap (a class with methods is run as its methods).
	Item bool `json:"item"`
}

// Lines is the span as A-B.
func (d Decl) Lines() string { return fmt.Sprintf("%d-%d", d.Start, d.End) }

// names are every name that finds d.
func (d Decl) names() []string { return append([]string{d.Name}, d.Also...) }

// Language is one language the finder reads, and how its declarations are named in words.
type Language struct {
	// Name is the language's name: "Python".
	Name string
	// Kinds names what a declaration may be, for a name that finds none.
	Kinds string
	// Method is how a method is named: "Class.method".
	Method string
	// TreeSitter says its parser is tree-sitter's, which needs cgo.
	TreeSitter bool
	grammar    grammar
}

// grammar names a tree-sitter grammar; the cgo build maps it to the parser.
type grammar int

const (
	noGrammar grammar = iota
	python
	typescript
	tsx
	javascript
	rust
)

var (
	goLang     = &Language{Name: "Go", Kinds: "function, method, type, const or var", Method: "Type.Method"}
	pythonLang = &Language{Name: "Python", Kinds: "function, method, class or module-level variable", Method: "Class.method", TreeSitter: true, grammar: python}
	tsLang     = &Language{Name: "TypeScript", Kinds: "function, method, class, interface, type, enum or top-level const", Method: "Class.method", TreeSitter: true, grammar: typescript}
	tsxLang    = &Language{Name: "TypeScript", Kinds: tsLang.Kinds, Method: "Class.method", TreeSitter: true, grammar: tsx}
	jsLang     = &Language{Name: "JavaScript", Kinds: "function, method, class or top-level const", Method: "Class.method", TreeSitter: true, grammar: javascript}
	rustLang   = &Language{Name: "Rust", Kinds: "function, method, struct, enum, union, trait, type, const, static or macro", Method: "Type.method", TreeSitter: true, grammar: rust}
)

// byExt maps a file's extension, in lower case, to its language.
var byExt = map[string]*Language{
	".go": goLang,
	".py": pythonLang, ".pyi": pythonLang,
	".ts": tsLang, ".mts": tsLang, ".cts": tsLang, ".tsx": tsxLang,
	".js": jsLang, ".mjs": jsLang, ".cjs": jsLang, ".jsx": jsLang,
	".rs": rustLang,
}

// Known is the languages read, in words: "Go, Python, TypeScript, JavaScript and Rust".
const Known = "Go, Python, TypeScript, JavaScript and Rust"

// LanguageOf is the language of the file name by its extension, nil for one not read.
func LanguageOf(name string) *Language {
	return byExt[strings.ToLower(filepath.Ext(name))]
}

// IsTestFile says whether name is a test file by its language's convention (x_test.go,
// test_x.py or x_test.py, x.test.ts or x.spec.js): a workflow over a package's declarations
// leaves them out. Rust keeps its unit tests in the file they test.
func IsTestFile(name string) bool {
	base := strings.ToLower(filepath.Base(name))
	ext := filepath.Ext(base)
	stem := strings.TrimSuffix(base, ext)
	switch LanguageOf(base) {
	case goLang:
		return strings.HasSuffix(stem, "_test")
	case pythonLang:
		return strings.HasPrefix(stem, "test_") || strings.HasSuffix(stem, "_test") || stem == "conftest"
	case tsLang, tsxLang, jsLang:
		return strings.HasSuffix(stem, ".test") || strings.HasSuffix(stem, ".spec")
	}
	return false
}

// LanguageError is a file whose language the finder does not read.
type LanguageError struct{ File string }

func (e *LanguageError) Error() string {
	return fmt.Sprintf("%s is not a file of %s, whose declarations locum finds", e.File, Known)
}

// NoCgoError is a tree-sitter language in a build without cgo.
type NoCgoError struct {
	Language string
	// Ext is the file's extension: ".py".
	Ext string
}

func (e *NoCgoError) Error() string {
	return fmt.Sprintf("this locum was built without cgo: declarations in %s files (%s) need a build with a C compiler", e.Language, e.Ext)
}

// SyntaxError is a file that does not parse, at its first error.
type SyntaxError struct {
	Language string
	// Line and Column are 1-based; Column counts bytes.
	Line, Column int
	// What is the error: `unexpected "}"`, `missing ";"`.
	What string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("does not parse as %s (line %d:%d: %s)", e.Language, e.Line, e.Column, e.What)
}

// TooLargeError is a file over MaxBytes.
type TooLargeError struct{ Size, Max int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("is %d bytes, over the %d whose declarations are found", e.Size, e.Max)
}

// NotFoundError is a name that finds no declaration.
type NotFoundError struct {
	Name     string
	Language *Language
	// Near are declarations the name may have meant: a method by its bare name, or the name in
	// another letter case.
	Near []string
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("declares no %s of that name (a method is %s)", e.Language.Kinds, e.Language.Method)
	if len(e.Near) > 0 {
		msg += "; did you mean " + orList(e.Near) + "?"
	}
	return msg
}

// AmbiguousError is a name that finds more than one declaration: a Python property's getter and
// setter, a Rust method of two impls of one type, two init functions of a Go file.
type AmbiguousError struct {
	Name string
	// Spans are the candidates' lines, A-B, in file order.
	Spans []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("declares it %d times (lines %s)", len(e.Spans), strings.Join(e.Spans, ", "))
}

// maxNear bounds the candidates a NotFoundError names.
const maxNear = 8

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// parse is every declaration of src, in file order, with its span; a name may be found more
// than once.
func parse(name string, src []byte) (*Language, []Decl, error) {
	lang := LanguageOf(name)
	if lang == nil {
		return nil, nil, &LanguageError{File: name}
	}
	if lang == goLang {
		decls, err := goDecls(name, src)
		return lang, decls, err
	}
	decls, err := treeDecls(lang, name, src)
	return lang, decls, err
}

// Find is the declaration that name finds in the file: one whose Name or Also it is. A name
// found more than once is an *AmbiguousError with the candidates' lines, one found nowhere a
// *NotFoundError with the names it may have meant.
func Find(file string, src []byte, name string) (Decl, error) {
	lang, decls, err := parse(file, src)
	if err != nil {
		return Decl{}, err
	}
	var found []Decl
	for _, d := range decls {
		if slices.Contains(d.names(), name) {
			found = append(found, d)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return Decl{}, &NotFoundError{Name: name, Language: lang, Near: near(decls, name)}
	}
	spans := make([]string, len(found))
	for i, d := range found {
		spans[i] = d.Lines()
	}
	return Decl{}, &AmbiguousError{Name: name, Spans: spans}
}

// near are the names of decls that name may have meant: those whose last part (the method of
// Class.method) is name, or that are name in another letter case, each once.
func near(decls []Decl, name string) []string {
	var out []string
	for _, d := range decls {
		for _, n := range d.names() {
			last := n[strings.LastIndex(n, ".")+1:]
			if (last == name || strings.EqualFold(n, name)) && n != name && !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	if len(out) > maxNear {
		out = out[:maxNear]
	}
	return out
}

// List is the declarations of the file that Find finds by their Name, in file order: a name
// declared more than once (a Go init, a property's getter and setter) is left out, as it names
// no one span, as is Go's blank name. Each that holds no other listed declaration is an Item.
func List(file string, src []byte) ([]Decl, error) {
	_, decls, err := parse(file, src)
	if err != nil {
		return nil, err
	}
	count := map[string]int{}
	for _, d := range decls {
		for _, n := range d.names() {
			count[n]++
		}
	}
	var out []Decl
	for _, d := range decls {
		if count[d.Name] == 1 && d.Name != "_" {
			out = append(out, d)
		}
	}
	for i := range out {
		out[i].Item = true
		for j := range out {
			if i == j || out[j].Start < out[i].Start || out[j].End > out[i].End {
				continue
			}
			// Of two on the same lines (a class and its method on one line), the first, the
			// outer, is the item.
			if out[j].Start != out[i].Start || out[j].End != out[i].End || j < i {
				out[i].Item = false
				break
			}
		}
	}
	// Two that share a line without one holding the other (code run together on one line) are
	// not both items: the first is.
	last := 0
	for i := range out {
		if !out[i].Item {
			continue
		}
		if out[i].Start <= last {
			out[i].Item = false
			continue
		}
		last = out[i].End
	}
	return out, nil
}

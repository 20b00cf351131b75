package scope

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"

	"github.com/locumdev/locum/runner/engine"
)

// SymbolRange finds the lines of the Go declaration name in src: a function, a method written
// Type.Method, a type, or the const or var block that declares name, its doc comment included.
// A model edits best when it sees one whole unit, and the user names it rather than counting lines.
func SymbolRange(display string, src []byte, name string) (LineRange, error) {
	if strings.ToLower(filepath.Ext(display)) != ".go" {
		return LineRange{}, engine.BadInputf("{symbol} works on Go files; %s is not one: give its span with {lines} A-B", display)
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return LineRange{}, engine.BadInputf("{symbol} is empty: name a function, Type.Method, type, const or var")
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, display, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return LineRange{}, engine.BadInputf("{symbol} %s: %s does not parse as Go (%v); give the span with {lines} A-B", name, display, err)
	}
	recv, method, isMethod := strings.Cut(name, ".")
	var found []LineRange
	span := func(doc *ast.CommentGroup, node ast.Node) LineRange {
		start := node.Pos()
		if doc != nil {
			start = doc.Pos()
		}
		return LineRange{Start: fset.Position(start).Line, End: fset.Position(node.End()).Line}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			switch {
			case isMethod && d.Recv != nil && d.Name.Name == method && receiverType(d.Recv) == recv,
				!isMethod && d.Recv == nil && d.Name.Name == name:
				found = append(found, span(d.Doc, d))
			}
		case *ast.GenDecl:
			if isMethod {
				continue
			}
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.Name != name {
						continue
					}
					// One type of a grouped type block is a unit of its own.
					if d.Lparen.IsValid() {
						doc := s.Doc
						found = append(found, span(doc, s))
					} else {
						found = append(found, span(d.Doc, d))
					}
				case *ast.ValueSpec:
					for _, id := range s.Names {
						if id.Name == name {
							found = append(found, span(d.Doc, d))
						}
					}
				}
			}
		}
	}
	switch len(found) {
	case 0:
		return LineRange{}, engine.BadInputf("{symbol} %s: %s declares no function, method, type, const or var of that name (a method is Type.Method)", name, display)
	case 1:
		return found[0], nil
	}
	return LineRange{}, engine.BadInputf("{symbol} %s: %s declares it %d times; give the span with {lines} A-B", name, display, len(found))
}

// receiverType is the name of a method's receiver type, without a pointer or type parameters.
func receiverType(recv *ast.FieldList) string {
	if recv == nil || len(recv.List) == 0 {
		return ""
	}
	expr := recv.List[0].Type
	for {
		switch e := expr.(type) {
		case *ast.StarExpr:
			expr = e.X
		case *ast.IndexExpr:
			expr = e.X
		case *ast.IndexListExpr:
			expr = e.X
		case *ast.ParenExpr:
			expr = e.X
		case *ast.Ident:
			return e.Name
		default:
			return ""
		}
	}
}

// Symbols lists the Go declarations of src that SymbolRange finds once each, in source order: a
// function, a method as Type.Method, a type, and a const or var block by its first name (the
// block is one unit). A name declared twice (init, or _) is left out, since it names no one span.
func Symbols(display string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, display, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, engine.BadInputf("%s does not parse as Go (%v)", display, err)
	}
	var names []string
	count := map[string]int{}
	add := func(name string) {
		if name != "_" && name != "" {
			count[name]++
			if count[name] == 1 {
				names = append(names, name)
			}
		}
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv != nil {
				if recv := receiverType(d.Recv); recv != "" {
					add(recv + "." + d.Name.Name)
				}
			} else {
				add(d.Name.Name)
			}
		case *ast.GenDecl:
			for i, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					add(s.Name.Name)
				case *ast.ValueSpec:
					// Every name of a block finds the whole block: the first stands for it,
					// and the others still count, so a name declared twice is seen.
					for j, id := range s.Names {
						if i == 0 && j == 0 {
							add(id.Name)
						} else if count[id.Name] > 0 {
							count[id.Name]++
						}
					}
				}
			}
		}
	}
	out := names[:0]
	for _, n := range names {
		if count[n] == 1 {
			out = append(out, n)
		}
	}
	return out, nil
}

package symbols

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
)

// goDecls is every top-level declaration of a Go file: a function, a method named Type.Method
// (its receiver's type without pointer or type parameters), a type (one of a grouped type block
// on its own), and a const or var block as one unit that each of its names finds. The doc
// comment is the span's start.
func goDecls(name string, src []byte) ([]Decl, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, goSyntaxError(err)
	}
	span := func(doc *ast.CommentGroup, node ast.Node) (int, int) {
		start := node.Pos()
		if doc != nil {
			start = doc.Pos()
		}
		return fset.Position(start).Line, fset.Position(node.End()).Line
	}
	var out []Decl
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			dl := Decl{Name: d.Name.Name, Kind: "function"}
			if d.Recv != nil {
				recv := receiverType(d.Recv)
				if recv == "" {
					continue
				}
				dl.Name, dl.Kind = recv+"."+d.Name.Name, "method"
			}
			dl.Start, dl.End = span(d.Doc, d)
			out = append(out, dl)
		case *ast.GenDecl:
			var block *Decl
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					dl := Decl{Name: s.Name.Name, Kind: "type"}
					// One type of a grouped type block is a unit of its own.
					if d.Lparen.IsValid() {
						dl.Start, dl.End = span(s.Doc, s)
					} else {
						dl.Start, dl.End = span(d.Doc, d)
					}
					out = append(out, dl)
				case *ast.ValueSpec:
					// A const or var block is one unit: every name of it finds the whole block.
					for _, id := range s.Names {
						if block == nil {
							block = &Decl{Name: id.Name, Kind: d.Tok.String()}
							block.Start, block.End = span(d.Doc, d)
							continue
						}
						block.Also = append(block.Also, id.Name)
					}
				}
			}
			if block != nil {
				out = append(out, *block)
			}
		}
	}
	return out, nil
}

// goSyntaxError is go/parser's first error as a *SyntaxError.
func goSyntaxError(err error) error {
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		return &SyntaxError{Language: goLang.Name, Line: list[0].Pos.Line, Column: list[0].Pos.Column, What: list[0].Msg}
	}
	return &SyntaxError{Language: goLang.Name, Line: 1, Column: 1, What: err.Error()}
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

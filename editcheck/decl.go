package editcheck

import (
	"fmt"
	"go/ast"
	"go/token"
)

// Kinds of declaration, as IsDecl reports them.
const (
	KindFunc   = "func"
	KindMethod = "method"
	KindType   = "type"
	KindVar    = "var"
	KindConst  = "const"
	kindImport = "import"
)

// decl is what the checks know of one top-level declaration.
type decl struct {
	kind string
	// name is a function's or type's name, a method's receiver type and name (Cache.Add), or a
	// var, const or import block's first name (the block is one unit).
	name string
	// grouped is a var, const, type or import block written with parentheses.
	grouped bool
	node    ast.Decl
}

// describe says what d declares; ok is false for a declaration the parser could not read, a
// method whose receiver names no type, and an empty block.
func describe(d ast.Decl) (decl, bool) {
	switch d := d.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			return decl{kind: KindFunc, name: d.Name.Name, node: d}, true
		}
		recv := receiverType(d.Recv)
		if recv == "" {
			return decl{}, false
		}
		return decl{kind: KindMethod, name: recv + "." + d.Name.Name, node: d}, true
	case *ast.GenDecl:
		out := decl{grouped: d.Lparen.IsValid(), node: d}
		switch d.Tok {
		case token.TYPE:
			out.kind = KindType
		case token.VAR:
			out.kind = KindVar
		case token.CONST:
			out.kind = KindConst
		case token.IMPORT:
			out.kind = kindImport
		default:
			return decl{}, false
		}
		if len(d.Specs) == 0 {
			return decl{}, false
		}
		switch s := d.Specs[0].(type) {
		case *ast.TypeSpec:
			out.name = s.Name.Name
		case *ast.ValueSpec:
			if len(s.Names) == 0 {
				return decl{}, false
			}
			out.name = s.Names[0].Name
		case *ast.ImportSpec:
			if s.Path == nil {
				return decl{}, false
			}
			out.name = s.Path.Value
		}
		return out, true
	}
	return decl{}, false
}

// receiverType is the name of a method's receiver type, without a pointer or type parameters,
// as locum's --symbol names a method (Cache.Add for func (c *Cache[K]) Add).
func receiverType(recv *ast.FieldList) string {
	if recv == nil || len(recv.List) == 0 {
		return ""
	}
	expr := recv.List[0].Type
	// The parser bounds the nesting; this bounds the walk whatever it gives.
	for range 1000 {
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
	return ""
}

// noun names d for a message: "the function `Average`", "the var block `x`".
func (d decl) noun() string {
	switch d.kind {
	case KindFunc:
		return fmt.Sprintf("the function `%s`", d.name)
	case KindMethod:
		return fmt.Sprintf("the method `%s`", d.name)
	case kindImport:
		if d.grouped {
			return "an import block"
		}
		return fmt.Sprintf("the import %s", d.name)
	}
	if d.grouped {
		return fmt.Sprintf("the `%s ( ... )` block that begins with `%s`", d.kind, d.name)
	}
	return fmt.Sprintf("the %s `%s`", d.kind, d.name)
}

// short names d in a list: "`Sum`", "type `Cache`".
func (d decl) short() string {
	switch d.kind {
	case KindFunc, KindMethod:
		return fmt.Sprintf("`%s`", d.name)
	case kindImport:
		return "an import"
	}
	return fmt.Sprintf("%s `%s`", d.kind, d.name)
}

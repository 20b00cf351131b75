//go:build cgo

package symbols

import (
	ts "github.com/tree-sitter/go-tree-sitter"
)

// Each collector walks the top level of a file and the bodies of its classes, impls and traits,
// nothing deeper: a function inside a function is part of its span.

// python finds functions, classes (their methods as Class.method, a class in a class as
// Outer.Inner), module-level variables assigned by name, and type aliases. Decorators are inside
// a decorated_definition; the docstring is inside the body.
func (t *treeFile) python(root *ts.Node) []raw {
	var out []raw
	var walk func(siblings []ts.Node, prefix string, inClass bool)
	walk = func(siblings []ts.Node, prefix string, inClass bool) {
		for i := range siblings {
			def := &siblings[i]
			if def.Kind() == "decorated_definition" {
				if def = def.ChildByFieldName("definition"); def == nil {
					continue
				}
			}
			r := raw{siblings: siblings, index: i}
			switch def.Kind() {
			case "function_definition":
				r.name, r.kind = t.text(def.ChildByFieldName("name")), "function"
				if inClass {
					r.kind = "method"
				}
			case "class_definition":
				r.name, r.kind = t.text(def.ChildByFieldName("name")), "class"
				if r.name != "" {
					out = append(out, raw{name: prefix + r.name, kind: r.kind, siblings: siblings, index: i})
					walk(t.pythonBody(def), prefix+r.name+".", true)
				}
				continue
			case "expression_statement":
				if inClass || def.NamedChildCount() != 1 {
					continue
				}
				assign := def.NamedChild(0)
				if assign.Kind() != "assignment" {
					continue
				}
				if left := assign.ChildByFieldName("left"); left != nil && left.Kind() == "identifier" {
					r.name, r.kind = t.text(left), "var"
				}
			case "type_alias_statement":
				if inClass {
					continue
				}
				left := def.ChildByFieldName("left")
				for left != nil && left.Kind() != "identifier" {
					left = left.NamedChild(0)
				}
				r.name, r.kind = t.text(left), "type"
			}
			if r.name != "" {
				r.name = prefix + r.name
				out = append(out, r)
			}
		}
	}
	walk(t.children(root), "", false)
	return out
}

// pythonBody is a class's body as siblings: the block's statements, after the comments between
// the colon and the first of them, which the grammar leaves outside the block.
func (t *treeFile) pythonBody(class *ts.Node) []ts.Node {
	body := class.ChildByFieldName("body")
	if body == nil {
		return nil
	}
	var out []ts.Node
	for _, c := range t.children(class) {
		if c.EndByte() <= body.StartByte() && isComment(&c) {
			out = append(out, c)
		}
	}
	return append(out, t.children(body)...)
}

// script finds, in TypeScript and JavaScript, functions (and TypeScript's overload signatures,
// joined to the function after them), classes (their methods as Class.method, and a field that
// holds an arrow function or a function as one), interfaces, type aliases, enums and top-level
// const declarations, each with the export or declare before it.
func (t *treeFile) script(root *ts.Node) []raw {
	var out []raw
	siblings := t.children(root)
	for i := range siblings {
		d := unwrapScript(&siblings[i])
		if d == nil {
			continue
		}
		r := raw{siblings: siblings, index: i, name: t.text(d.ChildByFieldName("name"))}
		switch d.Kind() {
		case "function_declaration", "generator_function_declaration":
			r.kind = "function"
		case "function_signature":
			r.kind, r.overload = "function", true
		case "class_declaration", "abstract_class_declaration":
			r.kind = "class"
			if r.name != "" {
				out = append(out, r)
				out = append(out, t.classMembers(d.ChildByFieldName("body"), r.name+".")...)
			}
			continue
		case "interface_declaration":
			r.kind = "interface"
		case "type_alias_declaration":
			r.kind = "type"
		case "enum_declaration":
			r.kind = "enum"
		case "lexical_declaration":
			if t.text(d.ChildByFieldName("kind")) != "const" {
				continue
			}
			r.kind, r.name = "const", ""
			for _, v := range t.children(d) {
				if v.Kind() != "variable_declarator" {
					continue
				}
				if id := v.ChildByFieldName("name"); id != nil && id.Kind() == "identifier" {
					if r.name == "" {
						r.name = t.text(id)
					} else {
						r.also = append(r.also, t.text(id))
					}
				}
			}
		default:
			continue
		}
		if r.name != "" {
			out = append(out, r)
		}
	}
	return out
}

// unwrapScript is the declaration an export or a declare statement makes, nil for an export of
// no declaration (export { a }, export default of an expression).
func unwrapScript(d *ts.Node) *ts.Node {
	for d != nil {
		switch d.Kind() {
		case "export_statement":
			d = d.ChildByFieldName("declaration")
		case "ambient_declaration":
			d = d.NamedChild(0)
		default:
			return d
		}
	}
	return nil
}

// classMembers are a class body's methods, named prefix+name: methods, overload and abstract
// signatures, and fields whose value is an arrow function or a function. A computed or quoted
// name is no name --symbol could be given.
func (t *treeFile) classMembers(body *ts.Node, prefix string) []raw {
	var out []raw
	siblings := t.children(body)
	for i := range siblings {
		m := &siblings[i]
		r := raw{siblings: siblings, index: i, kind: "method"}
		name := m.ChildByFieldName("name")
		switch m.Kind() {
		case "method_definition", "abstract_method_signature":
		case "method_signature":
			r.overload = true
		case "public_field_definition", "field_definition":
			if name == nil {
				name = m.ChildByFieldName("property")
			}
			value := m.ChildByFieldName("value")
			if value == nil || value.Kind() != "arrow_function" && value.Kind() != "function_expression" && value.Kind() != "function" {
				continue
			}
		default:
			continue
		}
		if name == nil || name.Kind() != "property_identifier" && name.Kind() != "private_property_identifier" {
			continue
		}
		r.name = prefix + t.text(name)
		out = append(out, r)
	}
	return out
}

// rust finds functions, structs, enums, unions, traits (their methods, with or without a body,
// as Trait.method), type aliases, consts, statics and macro_rules!, and the functions of an impl
// as Type.method, the type without its path or type arguments. An item inside a mod block is
// not named. Attributes and doc comments stand beside an item in the tree.
func (t *treeFile) rust(root *ts.Node) []raw {
	kinds := map[string]string{
		"function_item": "function", "struct_item": "struct", "enum_item": "enum", "union_item": "union",
		"type_item": "type", "const_item": "const", "static_item": "static", "macro_definition": "macro",
	}
	var out []raw
	siblings := t.children(root)
	for i := range siblings {
		d := &siblings[i]
		switch d.Kind() {
		case "impl_item":
			if typ := t.rustType(d.ChildByFieldName("type")); typ != "" {
				out = append(out, t.rustMethods(d.ChildByFieldName("body"), typ+".")...)
			}
			continue
		case "trait_item":
			name := t.text(d.ChildByFieldName("name"))
			if name != "" {
				out = append(out, raw{name: name, kind: "trait", siblings: siblings, index: i})
				out = append(out, t.rustMethods(d.ChildByFieldName("body"), name+".")...)
			}
			continue
		}
		kind, ok := kinds[d.Kind()]
		if !ok {
			continue
		}
		if name := t.text(d.ChildByFieldName("name")); name != "" {
			out = append(out, raw{name: name, kind: kind, siblings: siblings, index: i})
		}
	}
	return out
}

// rustMethods are the functions of an impl's or a trait's body, named prefix+name.
func (t *treeFile) rustMethods(body *ts.Node, prefix string) []raw {
	var out []raw
	siblings := t.children(body)
	for i := range siblings {
		m := &siblings[i]
		if m.Kind() != "function_item" && m.Kind() != "function_signature_item" {
			continue
		}
		if name := t.text(m.ChildByFieldName("name")); name != "" {
			out = append(out, raw{name: prefix + name, kind: "method", siblings: siblings, index: i})
		}
	}
	return out
}

// rustType is the name of an impl's type: Point for Point, Point<T>, geo::Point or &Point; ""
// for a type with no one name (a tuple, a slice).
func (t *treeFile) rustType(n *ts.Node) string {
	for n != nil {
		switch n.Kind() {
		case "type_identifier":
			return t.text(n)
		case "generic_type", "reference_type", "pointer_type":
			n = n.ChildByFieldName("type")
		case "scoped_type_identifier":
			n = n.ChildByFieldName("name")
		default:
			return ""
		}
	}
	return ""
}

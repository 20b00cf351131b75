package mutate

import (
	"errors"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
)

// maxCheckDepth is the deepest syntax tree type-checked: go/types recurses over the tree, and
// a file's nesting is the file author's choice. Deeper files are mutated without types.
const maxCheckDepth = 512

// typeCheck checks f alone, as its own package, with no import resolved: errors are expected
// (every imported name is unknown) and ignored, and what the checker could type is kept. Nil
// when f is too deep to check or the checker failed.
func typeCheck(fset *token.FileSet, f *ast.File) (info *types.Info) {
	if depth(f) > maxCheckDepth {
		return nil
	}
	info = &types.Info{
		Types: map[ast.Expr]types.TypeAndValue{},
		Defs:  map[*ast.Ident]types.Object{},
		Uses:  map[*ast.Ident]types.Object{},
	}
	conf := types.Config{Importer: noImports{}, Error: func(error) {}, FakeImportC: true}
	defer func() {
		if recover() != nil {
			info = nil
		}
	}()
	_, _ = conf.Check(f.Name.Name, fset, []*ast.File{f}, info)
	return info
}

type noImports struct{}

func (noImports) Import(string) (*types.Package, error) {
	return nil, errors.New("imports are not resolved")
}

// depth is the syntax tree's greatest nesting, counted up to a little past maxCheckDepth.
func depth(f *ast.File) int {
	d, deepest := 0, 0
	ast.Inspect(f, func(n ast.Node) bool {
		if n == nil {
			d--
			return false
		}
		d++
		deepest = max(deepest, d)
		if d > maxCheckDepth {
			d-- // Inspect calls f(nil) only after a true
			return false
		}
		return true
	})
	return deepest
}

// useIndex holds, for each local variable and imported package name of the file, the offsets
// where the compiler counts it used: every reference but a plain name being assigned to (x = 1
// is no use of x; x++ and x += 1 are). A variable or import with none left is a compile error.
type useIndex struct {
	uses map[types.Object][]int
	at   []useAt // every counted use, by offset
	decl map[types.Object]int
}

type useAt struct {
	off int
	obj types.Object
}

func newUseIndex(g *goFile, f *ast.File, info *types.Info) *useIndex {
	assigned := map[*ast.Ident]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.ASSIGN || n.Tok == token.DEFINE {
				for _, l := range n.Lhs {
					if id, ok := ast.Unparen(l).(*ast.Ident); ok {
						assigned[id] = true
					}
				}
			}
		case *ast.RangeStmt:
			for _, l := range []ast.Expr{n.Key, n.Value} {
				if id, ok := l.(*ast.Ident); ok && n.Tok == token.ASSIGN {
					assigned[id] = true
				}
			}
		}
		return true
	})
	x := &useIndex{uses: map[types.Object][]int{}, decl: map[types.Object]int{}}
	for id, obj := range info.Uses {
		if !counted(obj) || assigned[id] {
			continue
		}
		if off := g.off(id.Pos()); off >= 0 {
			x.uses[obj] = append(x.uses[obj], off)
			x.at = append(x.at, useAt{off, obj})
		}
	}
	for obj, offs := range x.uses {
		slices.Sort(offs)
		x.decl[obj] = g.off(obj.Pos())
	}
	slices.SortFunc(x.at, func(a, b useAt) int { return a.off - b.off })
	return x
}

// counted is whether an object left unused fails the build: a local variable or an import.
func counted(obj types.Object) bool {
	switch obj := obj.(type) {
	case *types.Var:
		return obj.Kind() == types.LocalVar
	case *types.PkgName:
		return true
	}
	return false
}

// removesLastUse is whether deleting the bytes [lo, hi) removes every use of a local variable
// declared outside them, or of an import. Without type information it cannot tell: false.
func (x *useIndex) removesLastUse(lo, hi int) bool {
	if x == nil {
		return false
	}
	i, _ := slices.BinarySearchFunc(x.at, lo, func(u useAt, off int) int { return u.off - off })
	for ; i < len(x.at) && x.at[i].off < hi; i++ {
		obj := x.at[i].obj
		if d := x.decl[obj]; d >= lo && d < hi {
			continue // declared inside: it goes with its uses
		}
		if offs := x.uses[obj]; offs[0] >= lo && offs[len(offs)-1] < hi {
			return true
		}
	}
	return false
}

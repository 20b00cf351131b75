package mutate

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/token"
	"go/types"
	"strconv"
	"strings"
)

// goFile collects the Go sites of one span. Every site replaces the bytes of one node (or of
// the whole lines of one statement) so the rest of the file keeps its bytes.
type goFile struct {
	src    []byte
	idx    lineIndex
	lo, hi int // the span's bytes
	tf     *token.File
	uses   *useIndex // nil when the file could not be type-checked
	info   *types.Info
	sites  []site
	posts  map[ast.Stmt]bool // for-loop post statements: a swapped i++ there can loop forever
}

// goSites parses file and collects the sites inside [lo, hi); false when it does not parse.
func goSites(file []byte, idx lineIndex, lo, hi int) ([]site, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", file, parser.SkipObjectResolution)
	if err != nil || f == nil {
		return nil, false
	}
	g := &goFile{src: file, idx: idx, lo: lo, hi: hi, tf: fset.File(f.Package), posts: map[ast.Stmt]bool{}}
	if g.tf == nil {
		return nil, false
	}
	if g.info = typeCheck(fset, f); g.info != nil {
		g.uses = newUseIndex(g, f, g.info)
	}
	ast.Inspect(f, g.visit)
	return g.sites, true
}

func (g *goFile) visit(n ast.Node) bool {
	if len(g.sites) >= maxSites || n == nil {
		return false
	}
	// A node wholly outside the span holds no site but may enclose it.
	if lo, hi := g.off(n.Pos()), g.off(n.End()); lo < 0 || hi < 0 || hi <= g.lo || lo >= g.hi {
		return false
	}
	switch n := n.(type) {
	case *ast.FuncDecl:
		if n.Body != nil {
			g.zeroReturn(n.Name.Name, n.Type, n.Body)
		}
	case *ast.FuncLit:
		g.zeroReturn("func literal", n.Type, n.Body)
	case *ast.IfStmt:
		g.negate(n.Cond)
	case *ast.ForStmt:
		g.negate(n.Cond)
		if n.Post != nil {
			g.posts[n.Post] = true
		}
	case *ast.BinaryExpr:
		g.swapBinary(n)
	case *ast.AssignStmt:
		if !g.posts[n] {
			g.swapAssign(n)
		}
	case *ast.IncDecStmt:
		if !g.posts[n] {
			g.swapIncDec(n)
		}
	case *ast.BlockStmt:
		g.deletable(n.List)
	case *ast.CaseClause:
		g.deletable(n.Body)
	case *ast.CommClause:
		g.deletable(n.Body)
	}
	return true
}

// off is pos as a byte offset of the file, -1 when it is none of the file's.
func (g *goFile) off(pos token.Pos) int {
	if !pos.IsValid() || int(pos) < g.tf.Base() || int(pos) > g.tf.Base()+g.tf.Size() {
		return -1
	}
	return int(pos) - g.tf.Base()
}

// text is the source of n, "" when its position is not the file's.
func (g *goFile) text(n ast.Node) string {
	lo, hi := g.off(n.Pos()), g.off(n.End())
	if lo < 0 || hi < lo || hi > len(g.src) {
		return ""
	}
	return string(g.src[lo:hi])
}

func (g *goFile) within(lo, hi int) bool { return lo >= g.lo && hi <= g.hi && lo >= 0 && lo <= hi }

func (g *goFile) add(kind string, lo, hi int, repl, desc string) {
	if !g.within(lo, hi) || len(g.sites) >= maxSites {
		return
	}
	line := g.idx.line(lo)
	g.sites = append(g.sites, site{kind: kind, line: line, lo: lo, hi: hi, repl: []byte(repl),
		desc: fmt.Sprintf("line %d: %s", line, desc)})
}

// zeroReturn replaces body by a return of each result's zero value, written *new(T) so that it
// holds for any T, type parameters included.
func (g *goFile) zeroReturn(name string, typ *ast.FuncType, body *ast.BlockStmt) {
	if body == nil || typ == nil {
		return
	}
	lo, hi := g.off(body.Lbrace), g.off(body.Rbrace)
	if lo < 0 || hi < 0 || !g.within(lo, hi+1) || g.uses.removesLastUse(lo, hi+1) {
		return
	}
	var zeros []string
	if typ.Results != nil {
		for _, field := range typ.Results.List {
			t := g.text(field.Type)
			if t == "" {
				return
			}
			for range max(1, len(field.Names)) {
				zeros = append(zeros, "*new("+t+")")
			}
		}
	}
	if len(zeros) == 0 {
		g.add(ZeroReturn, lo, hi+1, "{}", "body of "+name+" emptied")
		return
	}
	ret := "return " + strings.Join(zeros, ", ")
	indent := g.indent(lo)
	g.add(ZeroReturn, lo, hi+1, "{\n"+indent+"\t"+ret+"\n"+indent+"}", "body of "+name+" to "+quote(ret))
}

// indent is the leading blanks of the line holding off.
func (g *goFile) indent(off int) string {
	start := g.idx.start(g.idx.line(off))
	end := start
	for end < len(g.src) && (g.src[end] == '\t' || g.src[end] == ' ') {
		end++
	}
	return string(g.src[start:end])
}

// negate turns cond into !(cond), or !c back into c.
func (g *goFile) negate(cond ast.Expr) {
	if cond == nil {
		return
	}
	old := g.text(cond)
	if old == "" {
		return
	}
	repl := "!(" + old + ")"
	if u, ok := cond.(*ast.UnaryExpr); ok && u.Op == token.NOT {
		repl = g.text(ast.Unparen(u.X))
		if repl == "" {
			return
		}
	}
	g.add(NegateCondition, g.off(cond.Pos()), g.off(cond.End()), repl, quote(old)+" to "+quote(repl))
}

var swaps = map[token.Token]token.Token{
	token.LSS: token.GEQ, token.GEQ: token.LSS,
	token.LEQ: token.GTR, token.GTR: token.LEQ,
	token.EQL: token.NEQ, token.NEQ: token.EQL,
	token.ADD: token.SUB, token.SUB: token.ADD,
	token.MUL: token.QUO, token.QUO: token.MUL,
	token.LAND: token.LOR, token.LOR: token.LAND,
	token.ADD_ASSIGN: token.SUB_ASSIGN, token.SUB_ASSIGN: token.ADD_ASSIGN,
	token.MUL_ASSIGN: token.QUO_ASSIGN, token.QUO_ASSIGN: token.MUL_ASSIGN,
	token.INC: token.DEC, token.DEC: token.INC,
}

func (g *goFile) swapBinary(e *ast.BinaryExpr) {
	to, ok := swaps[e.Op]
	if !ok {
		return
	}
	switch e.Op {
	case token.ADD, token.SUB, token.MUL, token.QUO:
		// A constant expression swapped may overflow its type or divide by zero, which the
		// compiler refuses; a + of strings has no -.
		if g.constant(e) || (e.Op == token.ADD && !g.numeric(e, e.X, e.Y)) || (e.Op == token.MUL && g.zero(e.Y)) {
			return
		}
	}
	g.swapAt(e, e.OpPos, e.Op, to)
}

func (g *goFile) swapAssign(a *ast.AssignStmt) {
	to, ok := swaps[a.Tok]
	if !ok || len(a.Lhs) != 1 || len(a.Rhs) != 1 {
		return
	}
	if (a.Tok == token.ADD_ASSIGN && !g.numeric(a.Lhs[0], a.Rhs[0])) || (a.Tok == token.MUL_ASSIGN && g.zero(a.Rhs[0])) {
		return
	}
	g.swapAt(a, a.TokPos, a.Tok, to)
}

func (g *goFile) swapIncDec(s *ast.IncDecStmt) {
	g.swapAt(s, s.TokPos, s.Tok, swaps[s.Tok])
}

// swapAt replaces the operator from at pos by to, described with its expression when that is
// short.
func (g *goFile) swapAt(n ast.Node, pos token.Pos, from, to token.Token) {
	lo := g.off(pos)
	if lo < 0 || lo+len(from.String()) > len(g.src) || string(g.src[lo:lo+len(from.String())]) != from.String() {
		return
	}
	hi := lo + len(from.String())
	desc := quote(from.String()) + " to " + quote(to.String())
	if old := g.text(n); old != "" && !strings.Contains(old, "\n") && len(old) <= 60 {
		nlo := g.off(n.Pos())
		repl := old[:lo-nlo] + to.String() + old[hi-nlo:]
		desc = quote(old) + " to " + quote(repl)
	}
	g.add(SwapOperator, lo, hi, to.String(), desc)
}

// constant is whether the type checker found e constant; without type information, whether
// both operands are literals.
func (g *goFile) constant(e *ast.BinaryExpr) bool {
	if g.info != nil {
		if tv, ok := g.info.Types[e]; ok && tv.Value != nil {
			return true
		}
	}
	_, x := ast.Unparen(e.X).(*ast.BasicLit)
	_, y := ast.Unparen(e.Y).(*ast.BasicLit)
	return x && y
}

// numeric is whether + on these is arithmetic: the checked type of n is a number, or, with
// that unknown, an operand is a number literal (no string adds one).
func (g *goFile) numeric(n ast.Expr, operands ...ast.Expr) bool {
	if g.info != nil {
		if tv, ok := g.info.Types[n]; ok && tv.Type != nil {
			if b, ok := tv.Type.Underlying().(*types.Basic); ok && b.Kind() != types.Invalid {
				return b.Info()&types.IsNumeric != 0
			}
			if _, ok := tv.Type.Underlying().(*types.TypeParam); ok {
				return false // a type set may hold strings
			}
		}
	}
	for _, o := range operands {
		if lit, ok := ast.Unparen(o).(*ast.BasicLit); ok && lit.Kind != token.STRING && lit.Kind != token.CHAR {
			return true
		}
	}
	return false
}

// zero is whether e is a constant zero, which / may not take.
func (g *goFile) zero(e ast.Expr) bool {
	if g.info != nil {
		if tv, ok := g.info.Types[e]; ok && tv.Value != nil {
			return tv.Value.Kind() == constant.Unknown || constant.Sign(tv.Value) == 0
		}
	}
	lit, ok := ast.Unparen(e).(*ast.BasicLit)
	if !ok {
		return false
	}
	if f, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSuffix(lit.Value, "i"), "_", ""), 64); err == nil {
		return f == 0
	}
	v := constant.MakeFromLiteral(lit.Value, lit.Kind, 0)
	return v.Kind() == constant.Unknown || (v.Kind() != constant.String && constant.Sign(v) == 0)
}

// deletable adds a delete_statement site for each statement of list that the file compiles
// without and that stands on lines of its own.
func (g *goFile) deletable(list []ast.Stmt) {
	for _, s := range list {
		switch s := s.(type) {
		case *ast.ExprStmt:
			if isPanic(s.X) {
				continue // a function may end in it: deleting it can leave a missing return
			}
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE {
				continue
			}
		case *ast.IncDecStmt:
		default:
			continue
		}
		g.deleteLines(s)
	}
}

func isPanic(e ast.Expr) bool {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok {
		return false
	}
	id, ok := ast.Unparen(call.Fun).(*ast.Ident)
	return ok && id.Name == "panic"
}

// deleteLines deletes the whole lines of s when nothing else stands on them but blanks and a
// trailing line comment.
func (g *goFile) deleteLines(s ast.Stmt) {
	lo, hi := g.off(s.Pos()), g.off(s.End())
	if lo < 0 || hi < lo {
		return
	}
	first, last := g.idx.line(lo), g.idx.line(max(lo, hi-1))
	start, end := g.idx.start(first), g.idx.end(last)
	if strings.TrimSpace(string(g.src[start:lo])) != "" {
		return
	}
	if rest := strings.TrimSpace(string(g.src[hi:end])); rest != "" && !strings.HasPrefix(rest, "//") {
		return
	}
	if !g.within(start, end) || g.uses.removesLastUse(lo, hi) {
		return
	}
	// Between two blank lines, one goes too: gofmt keeps no two together.
	if first > 1 && last < g.idx.count() && g.blank(first-1) && g.blank(last+1) && g.within(start, g.idx.end(last+1)) {
		end = g.idx.end(last + 1)
	}
	g.add(DeleteStatement, start, end, "", "deleted "+quote(string(g.src[lo:hi])))
}

func (g *goFile) blank(line int) bool {
	return strings.TrimSpace(string(g.src[g.idx.start(line):g.idx.end(line)])) == ""
}

package editcheck

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsDeclNamesOneDeclaration(t *testing.T) {
	cases := []struct {
		name, span, kind, decl string
		ok                     bool
	}{
		{"function with doc comment", average, KindFunc, "Average", true},
		{"one-line function", listNew, KindFunc, "New", true},
		{"pointer-receiver method", listNext, KindMethod, "Element.Next", true},
		{"generic method", "func (s *Stack[T]) Push(v T) { s.items = append(s.items, v) }", KindMethod, "Stack.Push", true},
		{"struct type", listElement, KindType, "Element", true},
		{"const block by its first name", mathConsts, KindConst, "E", true},
		{"single var", "var debug = false", KindVar, "debug", true},
		{"one type of a type block", "// Key names an entry.\nKey string", KindType, "Key", true},
		{"a line range of statements", "\tsum += x\n}", "", "", false},
		{"two declarations", listNext + "\n\n" + listPrev, "", "", false},
		{"an import", `import "fmt"`, "", "", false},
		{"only a comment", "// nothing here", "", "", false},
		{"empty", "", "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kind, name, ok := IsDecl(c.span)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.kind, kind)
			assert.Equal(t, c.decl, name)
		})
	}
}

func TestDeclShapeAcceptsTheSameDeclaration(t *testing.T) {
	cases := []struct{ name, span, reply string }{
		{"a changed body", average, strings.Replace(average, "\tvar sum float64\n", "\tif len(xs) == 0 {\n\t\treturn 0\n\t}\n\tvar sum float64\n", 1)},
		{"a changed doc comment", listNext, strings.Replace(listNext, "or nil.", "or nil when e is the last.", 1)},
		{"the doc comment dropped", listNext, strings.SplitN(listNext, "\n", 2)[1]},
		{"a value receiver for a pointer one", listNext, strings.Replace(listNext, "(e *Element)", "(e Element)", 1)},
		{"a changed struct field", listElement, strings.Replace(listElement, "Value any", "Value int", 1)},
		{"a changed const block", mathConsts, strings.Replace(mathConsts, "Phi =", "Phi2 =", 1)},
		{"a one-line function made several", listNew, "// New returns an initialized list.\nfunc New() *List {\n\treturn new(List).Init()\n}\n"},
		{"one type of a block, changed", "// Key names an entry.\nKey string", "// Key names an entry of the cache.\nKey []byte"},
		{"a reply left with blank lines by the caller's fence stripping", average, "\n" + average + "\n\n"},
		{"a generic method with its receiver renamed", "func (s *Stack[T]) Push(v T) {}", "func (st *Stack[E]) Push(v E) { st.items = append(st.items, v) }"},
		{"a span that is not one declaration", "\tsum += x\n}", "anything at all {"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.NoError(t, DeclShape(c.span, c.reply))
		})
	}
}

func TestDeclShapeRefusesAnotherShape(t *testing.T) {
	cases := []struct {
		name, span, reply string
		reason, retry     []string
	}{
		{
			name: "the guard clause alone, as the real model sent it",
			span: average, reply: "if len(xs) == 0 {\n\treturn 0\n}",
			reason: []string{"3 lines of a function body", "not a declaration"},
			retry:  []string{"Send the whole function `Average`, from `func Average(` to its closing brace", "you sent 3 lines of its body"},
		},
		{
			name: "the doc comment alone",
			span: average, reply: "// Average returns the mean of xs, or 0 when xs is empty.\n",
			reason: []string{"only a comment", "delete the function `Average`"},
			retry:  []string{"Send your comment followed by the whole function `Average`", "you sent only a comment, which would delete the function"},
		},
		{
			name: "a type turned into a function",
			span: listElement, reply: "// Element is an element of a linked list.\nfunc Element() {}",
			reason: []string{"the function `Element`, not the type `Element`"},
			retry:  []string{"the whole type `Element`, from `type Element` to its end", "it must stay a type", "you sent the function `Element`"},
		},
		{
			name: "a function turned into a method",
			span: listNew, reply: "func (l *List) New() *List { return l.Init() }",
			reason: []string{"the method `List.New`, not the function `New`"},
			retry:  []string{"it must stay a function"},
		},
		{
			name: "a method turned into a function",
			span: listNext, reply: "func Next(e *Element) *Element { return e.next }",
			reason: []string{"the function `Next`, not the method `Element.Next`"},
			retry:  []string{"from `func (e *Element) Next(` to its closing brace", "it must stay a method"},
		},
		{
			name: "the next declaration",
			span: listNext, reply: listPrev,
			reason: []string{"declares the method `Element.Prev`, not the method `Element.Next`"},
			retry:  []string{"its name unchanged", "you sent the method `Element.Prev`"},
		},
		{
			name: "a rename",
			span: average, reply: strings.Replace(average, "Average", "Mean", -1),
			reason: []string{"the function `Mean`, not the function `Average`"},
			retry:  []string{"its name unchanged"},
		},
		{
			name: "the neighbour rewritten too",
			span: listNext, reply: listNext + "\n\n" + listPrev,
			reason: []string{"2 declarations", "also `Element.Prev`"},
			retry:  []string{"Send only the whole method `Element.Next`", "also held `Element.Prev`"},
		},
		{
			name: "an import with the function",
			span: average, reply: "import \"math\"\n\n" + average,
			reason: []string{"also an import"},
			retry:  []string{"also held an import"},
		},
		{
			name: "two declarations, neither the span's",
			span: average, reply: "func Sum(xs []float64) float64 { return 0 }\nvar zero = 0",
			reason: []string{"none is the function `Average`", "`Sum`, var `zero`"},
			retry:  []string{"nothing else"},
		},
		{
			name: "code that does not parse",
			span: average, reply: "// Average returns the mean of xs.\nfunc Average(xs []float64) float64 {\n\treturn sum /\n",
			reason: []string{"does not parse as Go: line 3"},
			retry:  []string{"does not parse as Go (line 3", "whole function `Average`"},
		},
		{
			name: "an empty reply",
			span: listNew, reply: " \n\t\n",
			reason: []string{"empty", "delete the function `New`"},
			retry:  []string{"your reply was empty"},
		},
		{
			name: "a const block made one const",
			span: mathConsts, reply: "const E = 2.718",
			reason: []string{"a single const declaration", "`const ( ... )` block that begins with `E`"},
			retry:  []string{"from `const (` to its closing parenthesis", "every name of the block"},
		},
		{
			name: "one type of a block sent with its keyword",
			span: "// Key names an entry.\nKey string", reply: "// Key names an entry.\ntype Key string",
			reason: []string{"with its keyword"},
			retry:  []string{"without the `type` keyword"},
		},
		{
			name: "statements for a type",
			span: listElement, reply: "e.next = nil\ne.prev = nil",
			reason: []string{"2 lines of statements"},
			retry:  []string{"the whole type `Element`"},
		},
		{
			name: "a reply over the bound",
			span: listNew, reply: strings.Repeat("x", MaxReplyBytes+1),
			reason: []string{"over the"},
			retry:  []string{"Send only"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := DeclShape(c.span, c.reply)
			var se *ShapeError
			require.ErrorAs(t, err, &se)
			for _, want := range c.reason {
				assert.Contains(t, se.Reason, want)
			}
			for _, want := range c.retry {
				assert.Contains(t, se.Retry, want)
			}
			assert.Contains(t, se.Error(), se.Reason)
		})
	}
}

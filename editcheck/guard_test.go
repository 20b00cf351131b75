package editcheck

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// edit is listFile with each old string replaced by the new one after it, once; it fails the
// test when an old string is not there, so a fixture change cannot leave a case testing nothing.
func edit(t *testing.T, pairs ...string) []byte {
	t.Helper()
	s := listFile
	for i := 0; i+1 < len(pairs); i += 2 {
		require.Contains(t, s, pairs[i])
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return []byte(s)
}

func TestCheckGuard(t *testing.T) {
	cases := []struct {
		name  string
		after func(t *testing.T) []byte
		// comments and signature are what each guard's Reason must hold, "" for a pass.
		comments, signature string
	}{
		{
			name:  "a changed doc comment",
			after: func(t *testing.T) []byte { return edit(t, "or nil.", "or nil at the end of the list.") },
		},
		{
			name: "a doc comment added and a field comment removed",
			after: func(t *testing.T) []byte {
				return edit(t, "func New()", "// It never fails.\nfunc New()", "\t// The list to which this element belongs.\n", "")
			},
		},
		{
			name: "a one-line function reformatted over three lines",
			after: func(t *testing.T) []byte {
				return edit(t, "func New() *List { return new(List).Init() }", "func New() *List {\n\treturn new(List).Init()\n}")
			},
		},
		{
			name:     "a changed body",
			after:    func(t *testing.T) []byte { return edit(t, "\treturn nil\n}", "\treturn e\n}") },
			comments: "changed the body of the method `Element.Next` (line 21)",
		},
		{
			name:      "a changed signature",
			after:     func(t *testing.T) []byte { return edit(t, "Len() int {", "Len() int64 {") },
			comments:  "changed the signature of the method `List.Len` (line 44)",
			signature: "changed the signature of the method `List.Len` (line 44)",
		},
		{
			name:      "a renamed parameter",
			after:     func(t *testing.T) []byte { return edit(t, "(l *List) Init()", "(list *List) Init()") },
			comments:  "changed the signature of the method `List.Init` (line 32)",
			signature: "changed the signature of the method `List.Init` (line 32)",
		},
		{
			name:      "a new function",
			after:     func(t *testing.T) []byte { return []byte(listFile + "\nfunc Clear(l *List) { l.Init() }\n") },
			comments:  "added the function `Clear` (line 46)",
			signature: "added the function `Clear` (line 46)",
		},
		{
			name:      "a removed function",
			after:     func(t *testing.T) []byte { return edit(t, "func New() *List { return new(List).Init() }\n", "") },
			comments:  "removed the function `New` (line 40 before the edit)",
			signature: "removed the function `New` (line 40 before the edit)",
		},
		{
			name:      "a changed type field",
			after:     func(t *testing.T) []byte { return edit(t, "len  int ", "len  int64 ") },
			comments:  "changed the type `List` (line 28)",
			signature: "changed the type `List` (line 28)",
		},
		{
			name:     "an added import",
			after:    func(t *testing.T) []byte { return edit(t, "package list\n", "package list\n\nimport \"fmt\"\n") },
			comments: "changed the imports (line 4)",
		},
		{
			name: "a moved function",
			after: func(t *testing.T) []byte {
				return edit(t, "// New returns an initialized list.\nfunc New() *List { return new(List).Init() }\n", "",
					"// List represents", "func New() *List { return new(List).Init() }\n\n// List represents")
			},
			comments: "moved the function `New` (line 24)",
		},
		{
			name:      "a renamed package",
			after:     func(t *testing.T) []byte { return edit(t, "package list", "package lists") },
			comments:  "changed the package clause (line 2)",
			signature: "changed the package clause (line 2)",
		},
		{
			name:      "a file that no longer parses",
			after:     func(t *testing.T) []byte { return edit(t, "\treturn nil\n}", "\treturn nil\n") },
			comments:  "fail to parse (line 33: ",
			signature: "fail to parse (line 33: ",
		},
		{
			name:     "a return split from its value",
			after:    func(t *testing.T) []byte { return edit(t, "\treturn l\n", "\treturn\n\tl\n") },
			comments: "changed the body of the method `List.Init` (line 36)",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			after := c.after(t)
			for _, g := range []struct{ guard, want string }{{GuardComments, c.comments}, {GuardSignature, c.signature}} {
				err := CheckGuard(g.guard, "list.go", []byte(listFile), after)
				if g.want == "" {
					assert.NoError(t, err, g.guard)
					continue
				}
				var ge *GuardError
				require.ErrorAs(t, err, &ge, g.guard)
				assert.Equal(t, g.guard, ge.Guard)
				assert.Contains(t, ge.Reason, g.want, g.guard)
				assert.Contains(t, ge.Retry, g.want, g.guard)
			}
			assert.NoError(t, CheckGuard(GuardSpan, "list.go", []byte(listFile), after))
		})
	}
}

func TestCheckGuardRetryTellsTheModelWhatItMayChange(t *testing.T) {
	after := edit(t, "\treturn nil\n}", "\treturn e\n}")
	var ge *GuardError
	require.ErrorAs(t, CheckGuard(GuardComments, "list.go", []byte(listFile), after), &ge)
	assert.Equal(t, "Change only comments: your edit changed the body of the method `Element.Next` (line 21).", ge.Retry)
	assert.Equal(t, "guard comments: the edit changed the body of the method `Element.Next` (line 21), outside the comments guard", ge.Error())

	require.ErrorAs(t, CheckGuard(GuardSignature, "list.go", []byte(listFile), edit(t, "Len() int {", "Len() int64 {")), &ge)
	assert.True(t, strings.HasPrefix(ge.Retry, "Change only function bodies"), ge.Retry)
}

func TestCheckGuardRefusesWhatItCannotCheck(t *testing.T) {
	cases := []struct {
		name, guard, file, before string
		unsupported               bool
	}{
		{"a non-Go file under comments", GuardComments, "README.md", "# Title\n", true},
		{"a non-Go file under signature", GuardSignature, "main.py", "def f(): pass\n", true},
		{"a non-Go file under span", GuardSpan, "README.md", "# Title\n", false},
		{"an unknown guard", "body", "list.go", listFile, true},
		{"a Go file that does not parse, under signature", GuardSignature, "bad.go", "package p\nfunc {", true},
		{"a Go file that does not parse, under comments", GuardComments, "bad.go", "package p\nfunc {", false},
		{"a Go file over the bound", GuardComments, "big.go", "package p\n" + strings.Repeat("//\n", MaxFileBytes/3+1), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Supported(c.guard, c.file, []byte(c.before))
			var ue *UnsupportedError
			if !c.unsupported {
				assert.NoError(t, err)
				assert.NoError(t, CheckGuard(c.guard, c.file, []byte(c.before), []byte(c.before)))
				return
			}
			require.ErrorAs(t, err, &ue)
			assert.Equal(t, c.file, ue.Name)
			require.ErrorAs(t, CheckGuard(c.guard, c.file, []byte(c.before), []byte(c.before)), &ue)
		})
	}
}

func TestCheckGuardCommentsOnAFileThatDidNotParse(t *testing.T) {
	before := []byte("package p\nfunc {\n// a\n")
	assert.NoError(t, CheckGuard(GuardComments, "bad.go", before, []byte("package p\nfunc {\n// b\n")))
	var ge *GuardError
	require.ErrorAs(t, CheckGuard(GuardComments, "bad.go", before, []byte("package p\nfunc x {\n")), &ge)
	assert.Contains(t, ge.Reason, "changed code (line 2)")
}

func TestGuardDocDescribesEveryGuard(t *testing.T) {
	for _, g := range Guards {
		doc := GuardDoc(g)
		assert.NotEmpty(t, doc, g)
		assert.NotContains(t, doc, "\n", g)
	}
	assert.Empty(t, GuardDoc("body"))
}

func TestTokensIgnoreOnlyWhatFormattingMoves(t *testing.T) {
	same := func(a, b string) bool { return firstDiff(tokens([]byte(a)), tokens([]byte(b))) < 0 }
	assert.True(t, same("f(a)}", "f(a)\n}"), "an optional semicolon before a brace")
	assert.True(t, same("f(a, b)", "f(\n\ta,\n\tb,\n)"), "a trailing comma")
	assert.True(t, same("x := 1 // one\n", "x := 1 /* one */\n"), "a comment's form")
	assert.True(t, same("a; b", "a\nb"), "an explicit semicolon for a newline")
	assert.False(t, same("return x\n", "return\nx\n"), "a newline that ends a statement")
	assert.False(t, same(`s := "a"`, "s := `a`"), "a literal's spelling")
	assert.False(t, same("a + b", "a - b"), "an operator")
}

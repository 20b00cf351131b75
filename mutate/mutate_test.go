package mutate

import (
	"bytes"
	"errors"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fixtures in testdata are the Go distribution's own code (BSD licence, The Go Authors;
// each file keeps its notice): container/list whole, functions of sort and strings, and
// excerpts of src/make.bash and src/runtime/runtime-gdb.py for the line-level kinds.

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return b
}

// funcSpan is the lines of the function or method named name in src, its doc comment left out.
func funcSpan(t testing.TB, src []byte, name string) (start, end int) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, 0)
	require.NoError(t, err)
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == name {
			return fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		}
	}
	t.Fatalf("no function %s", name)
	return 0, 0
}

func kindsOf(ms []Mutant) map[string]int {
	out := map[string]int{}
	for _, m := range ms {
		out[m.Kind]++
	}
	return out
}

func TestSpanMakesEachKindWhereItApplies(t *testing.T) {
	tests := []struct {
		file, fn   string
		start, end int // used when fn is ""
		want       []string
		absent     []string
	}{
		{file: "sort.go", fn: "insertionSort", want: []string{ZeroReturn, NegateCondition, SwapOperator, DeleteStatement}},
		{file: "sort.go", fn: "siftDown", want: []string{ZeroReturn, NegateCondition, SwapOperator, DeleteStatement}},
		{file: "sort.go", fn: "Search", want: []string{ZeroReturn, NegateCondition, SwapOperator, DeleteStatement}},
		{file: "strings.go", fn: "lastIndexFunc", want: []string{ZeroReturn, NegateCondition, SwapOperator}},
		// EqualFold is the file's one user of package unicode: emptying its body would leave
		// the import unused, which does not compile.
		{file: "strings.go", fn: "EqualFold", want: []string{NegateCondition, SwapOperator, DeleteStatement}, absent: []string{ZeroReturn}},
		// Len's body is one return: nothing to negate, swap or delete.
		{file: "list.go", fn: "Len", want: []string{ZeroReturn}, absent: []string{NegateCondition, SwapOperator, DeleteStatement}},
		{file: "list.go", fn: "remove", want: []string{ZeroReturn, DeleteStatement, SwapOperator}, absent: []string{NegateCondition}},
		{file: "make.bash", start: 1, end: 70, want: []string{DeleteLine, ChangeLiteral}, absent: goKinds},
		{file: "gdb.py", start: 18, end: 75, want: []string{DeleteLine, ChangeLiteral}, absent: goKinds},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.fn, func(t *testing.T) {
			src := fixture(t, tt.file)
			start, end := tt.start, tt.end
			if tt.fn != "" {
				start, end = funcSpan(t, src, tt.fn)
			}
			ms, err := Span(tt.file, src, start, end, 1000)
			require.NoError(t, err)
			kinds := kindsOf(ms)
			for _, k := range tt.want {
				assert.Positive(t, kinds[k], "no %s mutant", k)
			}
			for _, k := range tt.absent {
				assert.Zero(t, kinds[k], "a %s mutant", k)
			}
		})
	}
}

// TestSpanChangesOnlyTheSpan holds every mutant to its span: the bytes before the span's first
// line and after its last are the file's, and each mutant's Line is in the span.
func TestSpanChangesOnlyTheSpan(t *testing.T) {
	for _, name := range []string{"list.go", "sort.go", "strings.go", "make.bash", "gdb.py"} {
		src := fixture(t, name)
		idx := newLineIndex(src)
		for _, span := range [][2]int{{1, idx.count()}, {20, 40}, {idx.count() / 2, idx.count()/2 + 3}} {
			ms, err := Span(name, src, span[0], span[1], 1000)
			require.NoError(t, err)
			lo, hi := idx.start(span[0]), idx.end(span[1])
			for _, m := range ms {
				assert.Equal(t, src[:lo], m.Text[:lo], "%s %v: %s", name, span, m.Desc)
				assert.Equal(t, src[hi:], m.Text[len(m.Text)-(len(src)-hi):], "%s %v: %s", name, span, m.Desc)
				assert.GreaterOrEqual(t, m.Line, span[0], m.Desc)
				assert.LessOrEqual(t, m.Line, span[1], m.Desc)
				assert.True(t, strings.HasPrefix(m.Desc, "line "), m.Desc)
				assert.NotContains(t, m.Desc, "\n")
			}
		}
	}
}

func TestSpanIsDeterministic(t *testing.T) {
	src := fixture(t, "list.go")
	first, err := Span("list.go", src, 1, 235, 12)
	require.NoError(t, err)
	for range 3 {
		again, err := Span("list.go", src, 1, 235, 12)
		require.NoError(t, err)
		assert.Equal(t, first, again)
	}
}

// TestSpanSpreadsOverKindsAndLines shows a small max taking every kind in turn and lines far
// apart: the first mutants of each kind are not all at the span's top.
func TestSpanSpreadsOverKindsAndLines(t *testing.T) {
	tests := []struct {
		file       string
		start, end int
		kinds      []string
	}{
		{"list.go", 1, 235, goKinds},
		{"sort.go", 18, 140, goKinds},
		{"make.bash", 1, 70, lineKinds},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			src := fixture(t, tt.file)
			ms, err := Span(tt.file, src, tt.start, tt.end, 2*len(tt.kinds))
			require.NoError(t, err)
			require.Len(t, ms, 2*len(tt.kinds))
			for i, m := range ms {
				assert.Equal(t, tt.kinds[i%len(tt.kinds)], m.Kind, "mutant %d", i)
			}
			mid := (tt.start + tt.end) / 2
			var low, high int
			for _, m := range ms {
				if m.Line <= mid {
					low++
				} else {
					high++
				}
			}
			assert.Positive(t, low, "no mutant in the span's first half")
			assert.Positive(t, high, "no mutant in the span's second half")
		})
	}
}

// TestSpanHonoursMax shows at most max mutants, a smaller max taking a prefix of a larger.
func TestSpanHonoursMax(t *testing.T) {
	src := fixture(t, "sort.go")
	all, err := Span("sort.go", src, 1, 200, 1000)
	require.NoError(t, err)
	require.Greater(t, len(all), 20)
	for _, max := range []int{-1, 0, 1, 3, 7, 20} {
		ms, err := Span("sort.go", src, 1, 200, max)
		require.NoError(t, err)
		if max <= 0 {
			assert.Empty(t, ms)
			continue
		}
		assert.Len(t, ms, max)
		assert.Equal(t, all[:max], ms)
	}
}

func TestSpanMutantsDifferFromTheFileAndEachOther(t *testing.T) {
	for _, name := range []string{"list.go", "sort.go", "strings.go", "make.bash", "gdb.py"} {
		src := fixture(t, name)
		ms, err := Span(name, src, 1, 1<<20, 1000)
		require.NoError(t, err)
		require.NotEmpty(t, ms)
		seen := map[string]string{}
		for _, m := range ms {
			assert.NotEqual(t, src, m.Text, m.Desc)
			if other, ok := seen[string(m.Text)]; ok {
				t.Errorf("%s: %q and %q make the same file", name, m.Desc, other)
			}
			seen[string(m.Text)] = m.Desc
		}
	}
}

func TestSpanOfCommentsAndBlanksHasNoMutants(t *testing.T) {
	tests := []struct {
		file       string
		start, end int
	}{
		{"list.go", 1, 12},   // the licence and package doc comment
		{"list.go", 63, 65},  // a doc comment and a blank line
		{"sort.go", 1, 9},    // licence, note, blank lines
		{"strings.go", 1, 9}, // licence, note
		{"make.bash", 1, 6},  // licence and the note
		{"gdb.py", 1, 16},    // licence, docstring, comments
		{"gdb.py", 30, 32},   // a blank line and a comment
	}
	for _, tt := range tests {
		src := fixture(t, tt.file)
		ms, err := Span(tt.file, src, tt.start, tt.end, 100)
		require.NoError(t, err)
		assert.Empty(t, ms, "%s %d-%d", tt.file, tt.start, tt.end)
	}
}

func TestSpanRefusesWhatItCannotMutate(t *testing.T) {
	src := fixture(t, "sort.go")
	lines := newLineIndex(src).count()
	var large *TooLargeError
	_, err := Span("big.go", bytes.Repeat([]byte("a"), MaxFileBytes+1), 1, 1, 4)
	require.ErrorAs(t, err, &large)
	assert.Equal(t, MaxFileBytes+1, large.Size)

	for _, span := range [][2]int{{0, 3}, {-1, 3}, {5, 4}, {lines + 1, lines + 2}} {
		var se *SpanError
		_, err := Span("sort.go", src, span[0], span[1], 4)
		require.True(t, errors.As(err, &se), "span %v: %v", span, err)
		assert.Equal(t, lines, se.Lines)
	}
	// An end past the last line is the last line.
	ms, err := Span("sort.go", src, lines-20, lines+100, 4)
	require.NoError(t, err)
	assert.NotEmpty(t, ms)
}

// TestSpanFallsBackToLinesForGoThatDoesNotParse shows a broken .go file mutated line by line.
func TestSpanFallsBackToLinesForGoThatDoesNotParse(t *testing.T) {
	src := []byte("package p\n\nfunc f( {\n\tx := 41 // the answer less one\n\treturn true\n}\n")
	ms, err := Span("p.go", src, 3, 6, 100)
	require.NoError(t, err)
	kinds := kindsOf(ms)
	assert.Positive(t, kinds[DeleteLine])
	assert.Positive(t, kinds[ChangeLiteral])
	var descs []string
	for _, m := range ms {
		descs = append(descs, m.Desc)
	}
	assert.Contains(t, descs, `line 4: "41" to "42"`)
	assert.Contains(t, descs, `line 5: "true" to "false"`)
	assert.NotContains(t, descs, `line 6: deleted "}"`)
}

// TestSpanKeepsGoMutantsGofmtClean shows each Go mutant of a gofmt-clean file formatted as
// gofmt would, the rest of the file byte for byte the same.
func TestSpanKeepsGoMutantsGofmtClean(t *testing.T) {
	for _, name := range []string{"list.go", "sort.go", "strings.go"} {
		src := fixture(t, name)
		ms, err := Span(name, src, 1, 1<<20, 1000)
		require.NoError(t, err)
		for _, m := range ms {
			formatted, err := format.Source(m.Text)
			require.NoError(t, err, m.Desc)
			assert.Equal(t, string(formatted), string(m.Text), "%s: %s", name, m.Desc)
		}
	}
}

func TestDescribe(t *testing.T) {
	all := Describe(nil)
	lines := strings.Split(strings.TrimSuffix(all, "\n"), "\n")
	require.Len(t, lines, len(Kinds()))
	for i, k := range Kinds() {
		assert.True(t, strings.HasPrefix(lines[i], k+": "), lines[i])
	}
	assert.Equal(t, "", Describe([]string{"no_such_kind"}))
	assert.Equal(t, strings.Count(Describe(lineKinds), "\n"), 2)
	assert.True(t, strings.HasPrefix(Describe([]string{SwapOperator}), "swap_operator: "))
}

// TestSpanMakesEachFileOnce shows sites that make the same file counted once: deleting any of
// a thousand equal lines is one mutant, however large max.
func TestSpanMakesEachFileOnce(t *testing.T) {
	src := bytes.Repeat([]byte("again\n"), 1000)
	for _, max := range []int{1, 4, 1000} {
		ms, err := Span("notes.txt", src, 1, 1000, max)
		require.NoError(t, err)
		require.Len(t, ms, 1)
		assert.Equal(t, DeleteLine, ms[0].Kind)
	}
}

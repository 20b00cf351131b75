package mutate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goCases are small files of our own, each showing where a Go kind applies and where it must
// not because the file would not compile or the mutant could loop forever. The compile test
// builds every mutant of each.
var goCases = []struct {
	name       string
	src        string
	start, end int // 0, 0: the whole file
	want       []string
	never      []string // substrings no Desc may hold
}{
	{
		name: "string concatenation keeps its +",
		src: `package p

func join(s string, n int) (string, int) {
	s = s + "x"
	s += "y"
	n = n + 1
	n += 2
	return s, n
}
`,
		want:  []string{`line 6: "n + 1" to "n - 1"`, `line 7: "n += 2" to "n -= 2"`, `line 4: deleted "s = s + "x""`},
		never: []string{`s - "x"`, `s -= "y"`},
	},
	{
		name: "constants and zero divisors keep their operators",
		src: `package p

const c = 1 + 2

var a [c * 2]int

func scale(x, y float64) float64 {
	x *= 0
	y = x * 0.0
	return x * y
}
`,
		want:  []string{`line 10: "x * y" to "x / y"`},
		never: []string{`1 - 2`, `c / 2`, `/= 0`, `x / 0.0`},
	},
	{
		name: "a loop's post statement is not swapped",
		src: `package p

func count(n int) int {
	c := 0
	for i := 0; i < n; i++ {
		c++
	}
	return c
}
`,
		want:  []string{`line 6: "c++" to "c--"`, `line 5: "i < n" to "!(i < n)"`, `line 6: deleted "c++"`},
		never: []string{`"i++" to "i--"`, `deleted "i++"`},
	},
	{
		name: "returns, declarations, := and panics stay",
		src: `package p

func pick(ok bool) int {
	x := 1
	var y int
	y = x
	if !ok {
		panic("no")
	}
	return y + x
}
`,
		want:  []string{`line 6: deleted "y = x"`, `line 7: "!ok" to "ok"`, `line 3: body of pick to "return *new(int)"`},
		never: []string{`deleted "x := 1"`, `deleted "var y int"`, `deleted "panic`, `deleted "return`},
	},
	{
		name: "a statement or body holding an import's or a variable's last use stays",
		src: `package p

import "fmt"

func say(v int) func() string {
	w := v * 2
	fmt.Println(v)
	return func() string {
		return fmt.Sprint(w)
	}
}

func log(v int) {
	fmt.Println(v)
}
`,
		start: 5, end: 11,
		want: []string{`line 6: "v * 2" to "v / 2"`, `line 5: body of say to "return *new(func() string)"`},
		// The closure is w's only use; the span holds every use of fmt but log's.
		never: []string{`body of func literal`},
	},
	{
		name: "named results, type parameters and closures return zero values",
		src: `package p

func first[T any](xs []T) (v T, ok bool) {
	for _, x := range xs {
		return x, true
	}
	return v, false
}

func counter(step int) func() int {
	inc := func() int {
		return step * 2
	}
	return inc
}
`,
		want: []string{
			`line 3: body of first to "return *new(T), *new(bool)"`,
			`line 11: body of func literal to "return *new(int)"`,
		},
	},
	{
		name: "a function only partly in the span keeps its body",
		src: `package p

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
`,
		start: 4, end: 6,
		want:  []string{`line 4: "x < 0" to "!(x < 0)"`, `line 4: "x < 0" to "x >= 0"`},
		never: []string{`body of abs`},
	},
}

func TestGoKindsApplyWhereTheFileStillCompiles(t *testing.T) {
	for _, tt := range goCases {
		t.Run(tt.name, func(t *testing.T) {
			start, end := tt.start, tt.end
			if start == 0 {
				start, end = 1, strings.Count(tt.src, "\n")
			}
			ms, err := Span("p.go", []byte(tt.src), start, end, 1000)
			require.NoError(t, err)
			var descs []string
			for _, m := range ms {
				descs = append(descs, m.Desc)
			}
			for _, w := range tt.want {
				assert.Contains(t, descs, w)
			}
			for _, n := range tt.never {
				for _, d := range descs {
					assert.NotContains(t, d, n)
				}
			}
		})
	}
}

// TestSpanTypeChecksNoDeeperThanItsBound shows a file nested past maxCheckDepth mutated
// without types rather than refused.
func TestSpanTypeChecksNoDeeperThanItsBound(t *testing.T) {
	deep := strings.Repeat("(", maxCheckDepth) + "n" + strings.Repeat(")", maxCheckDepth)
	src := "package p\n\nfunc f(n int) int {\n\tn = n + 1\n\treturn " + deep + "\n}\n"
	ms, err := Span("p.go", []byte(src), 1, 6, 100)
	require.NoError(t, err)
	kinds := kindsOf(ms)
	assert.Positive(t, kinds[SwapOperator])
	assert.Positive(t, kinds[ZeroReturn])
}

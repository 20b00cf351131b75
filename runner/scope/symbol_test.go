package scope

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/symbols"
)

const symbolSrc = `package calc

import "fmt"

// Limit is the largest value.
const Limit = 10

const (
	A = 1
	B = 2
)

// Cache holds values.
type Cache struct {
	items map[string]int
}

type (
	// Key names an entry.
	Key string
	Val int
)

// Get looks a key up.
// It never fails.
func (c *Cache) Get(k string) int {
	return c.items[k]
}

func (s Stack[T]) Push(v T) {}

// Add adds.
func Add(a, b int) int {
	return a + b
}

var debug = fmt.Sprint("x")
`

func TestSymbolRange(t *testing.T) {
	cases := []struct {
		name string
		want LineRange
		err  string
	}{
		{"Add", LineRange{32, 35}, ""},
		{"Cache.Get", LineRange{24, 28}, ""},
		{"Stack.Push", LineRange{30, 30}, ""},
		{"Cache", LineRange{13, 16}, ""},
		{"Key", LineRange{19, 20}, ""},
		{"Limit", LineRange{5, 6}, ""},
		{"B", LineRange{8, 11}, ""},
		{"debug", LineRange{37, 37}, ""},
		{"Get", LineRange{}, "declares no function"},
		{"Nope", LineRange{}, "declares no function"},
		{"Other.Get", LineRange{}, "a method is Type.Method"},
		{" ", LineRange{}, "--symbol is empty"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SymbolRange("calc.go", []byte(symbolSrc), tc.name)
			if tc.err != "" {
				var bad *engine.BadInputError
				require.True(t, errors.As(err, &bad), "got %v", err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	_, err := SymbolRange("notes.md", []byte("# x"), "x")
	assert.ErrorContains(t, err, "give its span with --lines A-B")
	_, err = SymbolRange("bad.go", []byte("package x\nfunc {"), "x")
	assert.ErrorContains(t, err, "does not parse as Go")
	_, err = SymbolRange("init.go", []byte("package x\nfunc init() {}\nfunc init() {}\n"), "init")
	assert.ErrorContains(t, err, "declares it 2 times")
}

func FuzzSymbolRange(f *testing.F) {
	f.Add([]byte(symbolSrc), "Cache.Get")
	f.Add([]byte("package x\ntype (A int; B int)\n"), "B")
	f.Fuzz(func(t *testing.T, src []byte, name string) {
		r, err := SymbolRange("f.go", src, name)
		if err != nil {
			return
		}
		lines := len(SplitText(string(src)).Lines)
		if r.Start < 1 || r.End < r.Start || r.End > lines {
			t.Fatalf("range %v outside a file of %d lines", r, lines)
		}
	})
}

// The other languages go through the same finder; a build without cgo refuses them in words
// that name what to use instead.
func TestSymbolRangeBeyondGo(t *testing.T) {
	src := []byte("class Cache:\n    # Looks a key up.\n    @cached\n    def get(self, k):\n        \"\"\"Get k.\"\"\"\n        return self.items[k]\n")
	got, err := SymbolRange("cache.py", src, "Cache.get")
	if !symbols.CgoBuild {
		assert.EqualError(t, err, "this locum was built without cgo: --symbol for .py needs a build with a C compiler; use --lines")
		return
	}
	require.NoError(t, err)
	assert.Equal(t, LineRange{2, 6}, got)
	_, err = SymbolRange("cache.py", src, "get")
	assert.EqualError(t, err, "--symbol get: cache.py declares no function, method, class or module-level variable of that name (a method is Class.method); did you mean Cache.get?")
	_, err = SymbolRange("cache.py", []byte("def f(:\n"), "f")
	assert.EqualError(t, err, `--symbol f: cache.py does not parse as Python (line 1:7: missing ")"); give the span with --lines A-B`)
}

// Every file whose declarations --symbol finds is named by its language in a prompt.
func TestLanguageNamesEveryFileSymbolReads(t *testing.T) {
	for _, name := range []string{"a.go", "a.py", "a.pyi", "a.ts", "a.mts", "a.cts", "a.tsx", "a.js", "a.mjs", "a.cjs", "a.jsx", "a.rs"} {
		assert.Equal(t, symbols.LanguageOf(name).Name, Language(name), name)
	}
}

package symbols

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parsed says whether this build parses file: a tree-sitter language in a build without cgo is
// refused with a *NoCgoError, which err must then be.
func parsed(t *testing.T, file string, err error) bool {
	t.Helper()
	if CgoBuild || !LanguageOf(file).TreeSitter {
		return true
	}
	var nocgo *NoCgoError
	require.True(t, errors.As(err, &nocgo), "a build without cgo refuses %s: got %v", file, err)
	assert.Contains(t, err.Error(), "built without cgo")
	assert.Equal(t, strings.ToLower(filepath.Ext(file)), nocgo.Ext)
	return false
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return src
}

// The fixtures are real files of public projects (testdata/README.md names each and its
// licence): the spans were read off them by hand.
func TestFindInRealFiles(t *testing.T) {
	cases := []struct {
		file, name string
		kind       string
		start, end int
		err        string
	}{
		// Python: a decorated method with a docstring, its decorators stacked.
		{"numbers.py", "Complex.real", "method", 53, 60, ""},
		{"numbers.py", "Complex.__complex__", "method", 45, 47, ""},
		{"numbers.py", "Complex", "class", 32, 142, ""},
		{"numbers.py", "Number", "class", 12, 21, ""},
		{"numbers.py", "__all__", "var", 10, 10, ""},
		{"numbers.py", "Integral.numerator", "method", 383, 386, ""},
		{"numbers.py", "real", "", 0, 0, "did you mean Complex.real, Real or Real.real?"},
		{"numbers.py", "complex", "", 0, 0, "did you mean Complex?"},
		// TypeScript: an arrow function const, a class method, an interface, a type; a type and
		// a const of one name are two declarations.
		{"parseUtil.ts", "makeIssue", "const", 6, 41, ""},
		{"parseUtil.ts", "ParseStatus.mergeArray", "method", 101, 110, ""},
		{"parseUtil.ts", "ParseStatus", "class", 92, 151, ""},
		{"parseUtil.ts", "ParseContext", "interface", 53, 64, ""},
		{"parseUtil.ts", "isAsync", "const", 175, 176, ""},
		{"parseUtil.ts", "addIssueToContext", "function", 72, 86, ""},
		{"parseUtil.ts", "DIRTY", "", 0, 0, "declares it 2 times (lines 162-162, 163-163)"},
		// JavaScript: a method with its JSDoc, a blank line between as the project writes it.
		{"argument.js", "Argument.name", "method", 42, 50, ""},
		{"argument.js", "Argument.constructor", "method", 4, 40, ""},
		{"argument.js", "humanReadableArgName", "function", 134, 146, ""},
		{"argument.js", "Argument", "class", 3, 132, ""},
		// Rust: an impl method with its comment, a struct with its doc and attribute; a method of
		// two impls of one type is two declarations.
		{"ast.rs", "Path.from_ident", "method", 95, 102, ""},
		{"ast.rs", "Path", "struct", 62, 74, ""},
		{"ast.rs", "PathParameters.span", "method", 174, 179, ""},
		{"ast.rs", "DUMMY_NODE_ID", "const", 283, 286, ""},
		{"ast.rs", "Lifetime.fmt", "method", 44, 51, ""},
		{"ast.rs", "Path.fmt", "", 0, 0, "declares it 2 times (lines 83-85, 89-91)"},
		{"ast.rs", "Path.segments", "", 0, 0, "declares no function, method, struct"},
	}
	for _, tc := range cases {
		t.Run(tc.file+"#"+tc.name, func(t *testing.T) {
			d, err := Find(tc.file, fixture(t, tc.file), tc.name)
			if !parsed(t, tc.file, err) {
				return
			}
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.kind, d.Kind)
			assert.Equal(t, fmt.Sprintf("%d-%d", tc.start, tc.end), d.Lines())
		})
	}
}

// Every declaration List gives is what Find finds by its name, and no two items share a line.
func TestListIsWhatFindFinds(t *testing.T) {
	for _, file := range []string{"numbers.py", "parseUtil.ts", "argument.js", "ast.rs"} {
		t.Run(file, func(t *testing.T) {
			src := fixture(t, file)
			decls, err := List(file, src)
			if !parsed(t, file, err) {
				return
			}
			require.NoError(t, err)
			require.NotEmpty(t, decls)
			checkList(t, file, src, decls)
		})
	}
}

// checkList holds a list to what List promises: each name finds its span, spans lie in the
// file, names are unique, and items are disjoint and hold no other declaration.
func checkList(t *testing.T, file string, src []byte, decls []Decl) {
	t.Helper()
	checkSpans(t, src, decls)
	for _, d := range decls {
		found, err := Find(file, src, d.Name)
		require.NoError(t, err, d.Name)
		require.Equal(t, d.Lines(), found.Lines(), d.Name)
	}
}

// checkSpans holds a list's spans to what List promises, short of finding each again.
func checkSpans(t *testing.T, src []byte, decls []Decl) {
	t.Helper()
	lines := strings.Count(string(src), "\n") + 1
	seen := map[string]bool{}
	lastItem := 0
	for _, d := range decls {
		require.NotEmpty(t, d.Name)
		require.False(t, seen[d.Name], "%s listed twice", d.Name)
		seen[d.Name] = true
		require.True(t, 1 <= d.Start && d.Start <= d.End && d.End <= lines, "%s: %s outside %d lines", d.Name, d.Lines(), lines)
		if d.Item {
			require.Greater(t, d.Start, lastItem, "item %s overlaps the one before", d.Name)
			lastItem = d.End
		}
	}
}

func TestListNamesAndItems(t *testing.T) {
	cases := []struct {
		file, src string
		// want is each declaration as "kind name A-B", an item marked with *.
		want []string
	}{
		{"m.py", `import os

# A limit.
LIMIT = 10
X: int = 3
a, b = 1, 2

class A:
    """A doc."""

    def f(self):
        pass

    # doc for g
    @property
    def g(self):
        return 1

    @g.setter
    def g(self, v):
        pass
    # trailing in A

    class Inner:
        def h(self): pass

def h():
    x = 1
    # indented as the body: not k's doc
# about k
def k(): pass

type Alias = list[int]
`, []string{"var LIMIT 3-4 *", "var X 5-5 *", "class A 8-25", "method A.f 11-12 *", "class A.Inner 24-25", "method A.Inner.h 25-25 *", "function h 27-28 *", "function k 30-31 *", "type Alias 33-33 *"}},
		{"first.py", "class Cache:  # not a doc\n    # Looks a key up.\n    @cached\n    def get(self, k):\n        return k\n",
			[]string{"class Cache 1-5", "method Cache.get 2-5 *"}},
		{"m.ts", `/** Limit doc. */
export const LIMIT = 10, OTHER = 2;
let notConst = 1;
const f = (x: number) => x + 1;

/** Over. */
export function over(a: string): void;
export function over(a: number): void;
export function over(a: any) {}

@Component({})
export class A<T> extends B {
  // doc for m
  @Input()
  m(x: T): T { return x; }
  get v() { return 1; }
  set v(x) {}
  h = () => 1;
  n = 3;
  #p() {}
  ["computed"]() {}
  over(a: string): void;
  over(a: any) {}
}
interface I { x: number }
type T = string;
enum E { A }
export default function () {}
declare function d(): void;
abstract class Ab { abstract m(): void; }
namespace N { export function z() {} }
`, []string{"const LIMIT 1-2 *", "const f 4-4 *", "function over 6-9 *", "class A 11-24", "method A.m 13-15 *", "method A.h 18-18 *",
			"method A.#p 20-20 *", "method A.over 22-23 *", "interface I 25-25 *", "type T 26-26 *", "enum E 27-27 *", "function d 29-29 *",
			"class Ab 30-30 *", "method Ab.m 30-30"}},
		{"m.jsx", `export class View extends Component {
  /** Renders. */

  render() { return <div/>; }
  static create = function () {};
}
export const make = () => new View();
function helper() {}
`, []string{"class View 1-6", "method View.render 2-4 *", "method View.create 5-5 *", "const make 7-7 *", "function helper 8-8 *"}},
		{"m.tsx", `type Props = { n: number };
export const Row = ({ n }: Props) => <td>{n}</td>;
export class Table extends React.Component<Props> {
  render() { return <table><Row n={1} /></table>; }
}
`, []string{"type Props 1-1 *", "const Row 2-2 *", "class Table 3-5", "method Table.render 4-4 *"}},
		{"m.rs", `//! Crate doc.
use std::fmt;

/// A point.

#[derive(Debug)]
pub struct P<T> { x: T }

impl<T> P<T> {
    // New.
    #[inline]
    pub fn new(x: T) -> Self { P { x } }
}

impl fmt::Display for &P<i32> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}

pub trait Tr {
    fn req(&self);
    fn def(&self) {}
}
const C: u32 = 1;
static S: &str = "s";
macro_rules! m { () => {} }
type Alias = u32;
enum E { A }
union U { a: u32 }
fn free() {}
mod tests { fn t() {} }
impl (u8, u8) { fn tuple() {} }
`, []string{"struct P 4-7 *", "method P.new 10-12 *", "method P.fmt 16-16 *", "trait Tr 19-22", "method Tr.req 20-20 *", "method Tr.def 21-21 *",
			"const C 23-23 *", "static S 24-24 *", "macro m 25-25 *", "type Alias 26-26 *", "enum E 27-27 *", "union U 28-28 *", "function free 29-29 *"}},
		{"m.go", `package m

// Limit is a block.
const (
	Limit = 3
	Other = 4
)

var _ = 1

func init() {}
func init() {}

type T struct{}

func (t *T) M() {}

type (
	// A is one of a group.
	A int
	B[X any] struct{ x X }
)

func (b B[X]) Get() X { return b.x }
`, []string{"const Limit 3-7 *", "type T 14-14 *", "method T.M 16-16 *", "type A 19-20 *", "type B 21-21 *", "method B.Get 24-24 *"}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			decls, err := List(tc.file, []byte(tc.src))
			if !parsed(t, tc.file, err) {
				return
			}
			require.NoError(t, err)
			var got []string
			for _, d := range decls {
				s := fmt.Sprintf("%s %s %s", d.Kind, d.Name, d.Lines())
				if d.Item {
					s += " *"
				}
				got = append(got, s)
			}
			assert.Equal(t, tc.want, got)
			checkList(t, tc.file, []byte(tc.src), decls)
		})
	}
}

func TestFindRefuses(t *testing.T) {
	cases := []struct {
		file, src, name string
		check           func(t *testing.T, err error)
	}{
		{"notes.md", "# x", "x", func(t *testing.T, err error) {
			var e *LanguageError
			require.ErrorAs(t, err, &e)
			assert.Equal(t, "notes.md is not a file of Go, Python, TypeScript, JavaScript and Rust, whose declarations locum finds", err.Error())
		}},
		{"bad.go", "package x\nfunc {", "x", syntaxAt(2, 6, "Go")},
		{"bad.py", "def f():\n    return 1\n\ndef g(:\n    pass\n", "f", syntaxAt(4, 7, "Python")},
		{"bad.py", "x = (1,\n", "x", syntaxAt(1, 1, "Python")},
		{"bad.ts", "function f() {\n  return 1;\n}\nclass {\n", "f", syntaxAt(4, 1, "TypeScript")},
		{"bad.js", "const a = 1;\nconst = 2;\n", "a", syntaxAt(2, 1, "JavaScript")},
		{"bad.rs", "fn f() {\n    let x = ;\n}\n", "f", syntaxAt(2, 11, "Rust")},
		{"big.py", strings.Repeat("x = 1\n", MaxBytes/6+1), "x", func(t *testing.T, err error) {
			var e *TooLargeError
			require.ErrorAs(t, err, &e)
			assert.Equal(t, MaxBytes, e.Max)
		}},
		{"init.go", "package x\nfunc init() {}\nfunc init() {}\n", "init", func(t *testing.T, err error) {
			var e *AmbiguousError
			require.ErrorAs(t, err, &e)
			assert.Equal(t, []string{"2-2", "3-3"}, e.Spans)
		}},
		{"p.py", "class A:\n    @property\n    def x(self): return 1\n    @x.setter\n    def x(self, v): pass\n", "A.x", func(t *testing.T, err error) {
			assert.EqualError(t, err, "declares it 2 times (lines 2-3, 4-5)")
		}},
		{"p.py", "class A:\n    def get(self): pass\nclass B:\n    def get(self): pass\n", "get", func(t *testing.T, err error) {
			var e *NotFoundError
			require.ErrorAs(t, err, &e)
			assert.Equal(t, []string{"A.get", "B.get"}, e.Near)
			assert.EqualError(t, err, "declares no function, method, class or module-level variable of that name (a method is Class.method); did you mean A.get or B.get?")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			_, err := Find(tc.file, []byte(tc.src), tc.name)
			if LanguageOf(tc.file) != nil && !parsed(t, tc.file, err) {
				return
			}
			require.Error(t, err)
			tc.check(t, err)
		})
	}
}

// syntaxAt checks a *SyntaxError at a line and column.
func syntaxAt(line, col int, lang string) func(*testing.T, error) {
	return func(t *testing.T, err error) {
		t.Helper()
		var e *SyntaxError
		require.ErrorAs(t, err, &e)
		assert.Equal(t, lang, e.Language)
		assert.Equal(t, [2]int{line, col}, [2]int{e.Line, e.Column}, "%v", err)
		assert.Contains(t, err.Error(), "does not parse as "+lang)
	}
}

func TestIsTestFile(t *testing.T) {
	for name, want := range map[string]bool{
		"a_test.go": true, "a.go": false, "test_a.py": true, "a_test.py": true, "conftest.py": true, "a.py": false,
		"a.test.ts": true, "a.spec.tsx": true, "a.ts": false, "a.test.js": true, "a.spec.mjs": true, "a.rs": false, "latest.py": false,
	} {
		assert.Equal(t, want, IsTestFile(name), name)
	}
}

package symbols

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzFinder fuzzes one finder through List and Find: no input makes it panic, a file it refuses
// is refused with one of its errors (a syntax error inside the file), and what it lists holds to
// what List promises (checkSpans).
func fuzzFinder(f *testing.F, file string, fixtures []string, seeds ...string) {
	for _, name := range fixtures {
		src, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src, "")
	}
	for _, s := range seeds {
		f.Add([]byte(s), "")
	}
	f.Fuzz(func(t *testing.T, src []byte, name string) {
		lines := strings.Count(string(src), "\n") + 1
		decls, err := List(file, src)
		if err != nil {
			var syn *SyntaxError
			var large *TooLargeError
			var nocgo *NoCgoError
			switch {
			case errors.As(err, &syn):
				if syn.Line < 1 || syn.Line > lines || syn.Column < 1 {
					t.Fatalf("syntax error at %d:%d in a file of %d lines", syn.Line, syn.Column, lines)
				}
			case errors.As(err, &large), !CgoBuild && errors.As(err, &nocgo):
			default:
				t.Fatalf("refused with %T: %v", err, err)
			}
			return
		}
		// Finding each name again would parse the file once per declaration: the last one
		// listed and the fuzzed name stand for them.
		checkSpans(t, src, decls)
		if len(decls) > 0 {
			last := decls[len(decls)-1]
			if d, err := Find(file, src, last.Name); err != nil || d.Lines() != last.Lines() {
				t.Fatalf("%s listed at %s is found at %s (%v)", last.Name, last.Lines(), d.Lines(), err)
			}
		}
		if d, err := Find(file, src, name); err == nil && (d.Start < 1 || d.End < d.Start || d.End > lines) {
			t.Fatalf("%s found at %s in a file of %d lines", name, d.Lines(), lines)
		}
	})
}

func FuzzGo(f *testing.F) {
	fuzzFinder(f, "f.go", nil, "package x\ntype (A int; B int)\n", "package x\n// D.\nconst (\n\tA = 1\n\tB\n)\nfunc (r *R[T]) M() {}\n")
}

func FuzzPython(f *testing.F) {
	fuzzFinder(f, "f.py", []string{"numbers.py"},
		"class A:\n    # doc\n    @property\n    def x(self):\n        pass\n    # end\n\ndef f(): pass\nX = 1\n",
		"def f():\n\tif x:\n\t\treturn (1,\n")
}

func FuzzTypeScript(f *testing.F) {
	fuzzFinder(f, "f.ts", []string{"parseUtil.ts"},
		"/** D. */\nexport function o(a: string): void;\nexport function o(a: any) {}\n@C() export class A { @I() m() {} get v() { return 1 } h = () => 1; }\nconst f = () => 1, g = 2;\n")
}

func FuzzJavaScript(f *testing.F) {
	fuzzFinder(f, "f.jsx", []string{"argument.js"},
		"class A {\n  /** D. */\n\n  m() { return <b/>; }\n  static s = function () {};\n}\nexport const f = () => 1;\nfunction g() {}; function h() {\n}\n")
}

func FuzzRust(f *testing.F) {
	fuzzFinder(f, "f.rs", []string{"ast.rs"},
		"//! c\n/// d\n\n#[derive(Debug)]\nstruct P;\nimpl<T> P<T> { fn m(&self) {} }\nimpl X for &P { fn m(&self) {} }\ntrait T { fn r(&self); }\nmacro_rules! m { () => {} }\n")
}

package symbols

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkList is the parse and listing of each fixture, what --symbol and locum symbols add to a
// run's start: docs/performance.md quotes it.
func BenchmarkList(b *testing.B) {
	for _, name := range []string{"numbers.py", "parseUtil.ts", "argument.js", "ast.rs"} {
		src, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			if !CgoBuild {
				b.Skip("this build reads Go alone")
			}
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := List(name, src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

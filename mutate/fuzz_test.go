package mutate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzSpan holds Span to its promises on any file and span: no panic, an error only of the
// typed kinds, at most max mutants, none equal to the file or another, every change inside
// the span's bytes and every Line inside the span.
func FuzzSpan(f *testing.F) {
	names := []string{"x.go", "x.sh", "x.py", "x.c", "x.md", "x"}
	for _, fixture := range []string{"list.go", "sort.go", "strings.go", "make.bash", "gdb.py"} {
		b, err := os.ReadFile(filepath.Join("testdata", fixture))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint8(0), 1, 40, 8)
		f.Add(b, uint8(1), 10, 30, 3)
	}
	for _, c := range goCases {
		f.Add([]byte(c.src), uint8(0), 1, 30, 16)
	}
	f.Add([]byte("package p\nfunc f() int { if a < b { x++ }; return 1 }\n"), uint8(0), 1, 2, 5)
	f.Add([]byte("/* open\nx = 1 \"s\n"), uint8(3), 1, 2, 5)
	f.Add([]byte(""), uint8(5), 1, 1, 1)
	f.Fuzz(func(t *testing.T, file []byte, lang uint8, start, end, max int) {
		name := names[int(lang)%len(names)]
		max %= 64 // enough to see the bound; each mutant is a copy of the file
		ms, err := Span(name, file, start, end, max)
		if err != nil {
			var se *SpanError
			var le *TooLargeError
			if !errors.As(err, &se) && !errors.As(err, &le) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if len(ms) > max && len(ms) > 0 {
			t.Fatalf("%d mutants over max %d", len(ms), max)
		}
		idx := newLineIndex(file)
		end = min(end, idx.count())
		lo, hi := idx.start(start), idx.end(end)
		seen := map[string]bool{}
		for _, m := range ms {
			if bytes.Equal(m.Text, file) {
				t.Fatalf("%s: the file unchanged", m.Desc)
			}
			if seen[string(m.Text)] {
				t.Fatalf("%s: a mutant twice", m.Desc)
			}
			seen[string(m.Text)] = true
			tail := len(file) - hi
			if len(m.Text) < lo+tail || !bytes.Equal(m.Text[:lo], file[:lo]) || !bytes.Equal(m.Text[len(m.Text)-tail:], file[hi:]) {
				t.Fatalf("%s: changed outside lines %d-%d", m.Desc, start, end)
			}
			if m.Line < start || m.Line > end {
				t.Fatalf("%s: line %d outside %d-%d", m.Desc, m.Line, start, end)
			}
			if _, ok := kindDocs[m.Kind]; !ok {
				t.Fatalf("unknown kind %q", m.Kind)
			}
		}
	})
}

package editcheck

import (
	"errors"
	"strings"
	"testing"
)

// errText is an error as a comparable value, with its typed fields.
func errText(err error) string {
	var se *ShapeError
	var ge *GuardError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &se):
		return se.Reason + "\x00" + se.Retry
	case errors.As(err, &ge):
		return ge.Guard + "\x00" + ge.Reason + "\x00" + ge.Retry
	}
	return err.Error()
}

func FuzzDeclShape(f *testing.F) {
	for _, span := range []string{average, listNext, listElement, listNew, mathConsts, "Key string"} {
		f.Add(span, span)
		f.Add(span, "if len(xs) == 0 {\n\treturn 0\n}")
		f.Add(span, "// only a comment\n")
		f.Add(span, listNext+"\n"+listPrev)
		f.Add(span, "func (x) {")
		f.Add(span, "type Key string")
	}
	f.Fuzz(func(t *testing.T, span, reply string) {
		err := DeclShape(span, reply)
		var se *ShapeError
		if err != nil && (!errors.As(err, &se) || se.Reason == "" || se.Retry == "") {
			t.Fatalf("DeclShape returned %T %v, not a *ShapeError with a reason and a retry", err, err)
		}
		if again := DeclShape(span, reply); errText(again) != errText(err) {
			t.Fatalf("DeclShape is not deterministic: %q then %q", errText(err), errText(again))
		}
		if _, _, ok := IsDecl(span); !ok && err != nil {
			t.Fatalf("DeclShape refused a reply for a span IsDecl says is no declaration: %v", err)
		}
	})
}

func FuzzCheckGuard(f *testing.F) {
	f.Add(listFile, listFile)
	f.Add(listFile, strings.Replace(listFile, "return nil", "return e", 1))
	f.Add(listFile, strings.Replace(listFile, "// Len", "// Length", 1))
	f.Add(listFile, strings.Replace(listFile, "package list\n", "package list\n\nimport \"fmt\"\n", 1))
	f.Add(listFile, listFile+"\nfunc init() {}\nfunc init() {}\n")
	f.Add("package p\nfunc {", "package p\nfunc x {")
	f.Add("package p\nvar ()\nfunc (a []int) M() {}\n", "package p\nfunc (a []int) M() { return }\n")
	f.Fuzz(func(t *testing.T, before, after string) {
		for _, g := range Guards {
			err := CheckGuard(g, "f.go", []byte(before), []byte(after))
			var ge *GuardError
			var ue *UnsupportedError
			if err != nil && !errors.As(err, &ge) && !errors.As(err, &ue) {
				t.Fatalf("CheckGuard(%s) returned %T %v", g, err, err)
			}
			if ge != nil && (ge.Reason == "" || ge.Retry == "") {
				t.Fatalf("CheckGuard(%s) returned a GuardError without a reason or a retry: %+v", g, ge)
			}
			if again := CheckGuard(g, "f.go", []byte(before), []byte(after)); errText(again) != errText(err) {
				t.Fatalf("CheckGuard(%s) is not deterministic: %q then %q", g, errText(err), errText(again))
			}
			if err := CheckGuard(g, "f.go", []byte(before), []byte(before)); err != nil && !errors.As(err, &ue) {
				t.Fatalf("CheckGuard(%s) refused an unchanged file: %v", g, err)
			}
		}
	})
}

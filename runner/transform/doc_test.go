package transform

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDocComment(t *testing.T) {
	for _, tc := range []struct {
		name string
		span []string
		want []string
	}{
		{"line comments", []string{"// Add adds.", "// Twice.", "func Add() {}"}, []string{"// Add adds.", "// Twice."}},
		{"a block", []string{"/* Add", "   adds. */", "func Add() {}"}, []string{"/* Add", "   adds. */"}},
		{"a block with code on its closing line", []string{"/* Add adds. */ func Add() {}"}, nil},
		{"no doc", []string{"func Add() {}"}, nil},
		{"all comment", []string{"// only"}, nil},
	} {
		assert.Equal(t, tc.want, docComment(tc.span, "//"), tc.name)
	}
	// Python's comments begin with #; its decorators are no doc.
	assert.Equal(t, []string{"# Looks up."}, docComment([]string{"# Looks up.", "@cached", "def get(self): pass"}, "#"))
	assert.Nil(t, docComment([]string{"/* no */", "def get(self): pass"}, "#"))
	py := &transform{doc: []string{"# Looks up."}, comment: "#"}
	assert.Equal(t, []string{"# Looks up.", "@cached", "def get(self): pass"}, py.keepDoc([]string{"@cached", "def get(self): pass"}))
	assert.Equal(t, []string{"# New.", "def get(self): pass"}, py.keepDoc([]string{"# New.", "def get(self): pass"}))
	tr := &transform{doc: []string{"// Add adds."}, comment: "//"}
	assert.Equal(t, []string{"// Add adds.", "func Add() {}"}, tr.keepDoc([]string{"func Add() {}"}))
	assert.Equal(t, []string{"", "// New.", "func Add() {}"}, tr.keepDoc([]string{"", "// New.", "func Add() {}"}), "a reply with its own doc keeps it")
	assert.Empty(t, tr.keepDoc(nil), "a reply that empties the span removes the declaration, doc and all")
}

package editcheck

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDropPackageClause(t *testing.T) {
	span := []string{"func Add(a, b int) int {", "\treturn a - b", "}"}
	for _, tc := range []struct {
		name        string
		span, reply []string
		kept        []string
		clause      string
	}{
		{"leading clause dropped", span, []string{"package calc", "", "func Add(a, b int) int {", "\treturn a + b", "}"},
			[]string{"func Add(a, b int) int {", "\treturn a + b", "}"}, "package calc"},
		{"blank lines before it and a comment after", span, []string{"", "package calc // the package", "func Add() {}"},
			[]string{"func Add() {}"}, "package calc // the package"},
		{"no clause", span, []string{"func Add() {}"}, []string{"func Add() {}"}, ""},
		{"a span that has one keeps the reply's", []string{"package calc", "", "func Add() {}"}, []string{"package calc", "func Add() {}"},
			[]string{"package calc", "func Add() {}"}, ""},
		{"not a clause", span, []string{"package calc extra", "func Add() {}"}, []string{"package calc extra", "func Add() {}"}, ""},
		{"only a clause", span, []string{"package calc"}, []string{}, "package calc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept, clause := DropPackageClause(tc.span, tc.reply)
			assert.Equal(t, tc.kept, kept)
			assert.Equal(t, tc.clause, clause)
		})
	}
}

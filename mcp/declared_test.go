package mcp

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locumdev/locum/packs"
)

// argNames are the JSON names of an argument struct's fields, embedded structs' included.
func argNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, argNames(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}

// Every setting of a tool's mode is an argument of the tool, named as its flag in snake_case,
// except those only the operator sets (allow_remote, the verify's sandbox); the settings table is the declaration both
// front ends take them from.
func TestToolArgumentsDeclareTheModesSettings(t *testing.T) {
	for _, tc := range []struct {
		mode string
		args any
		// own are the tool's arguments that are no setting: what to work on.
		own []string
	}{
		{"transform", TransformArgs{}, []string{"file", "lines", "symbol", "verify", "task", "model"}},
		{"summarize", SummarizeArgs{}, []string{"file", "lines", "symbol", "focus", "model"}},
		{"dedup", DedupArgs{}, []string{"dir", "no_cache", "pairs"}},
		{"", StatusArgs{}, []string{"model", "embed_model"}},
	} {
		var want []string
		for _, f := range packs.SettingFlags(tc.mode) {
			if !f.OperatorOnly {
				want = append(want, strings.ReplaceAll(f.Name, "-", "_"))
			}
		}
		want = append(want, tc.own...)
		assert.ElementsMatch(t, want, argNames(reflect.TypeOf(tc.args)), "the arguments of the %q tool", tc.mode)
	}
}

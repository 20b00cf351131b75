package packs

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/spec"
)

// The settings table is the one declaration of a mode's settings; the pack contract's schema
// lists each mode's keys again, for editors and for `packs validate`. This holds the two to the
// same keys, mode by mode, and each key to a JSON type its kind parses.
func TestSchemaDeclaresTheTablesSettings(t *testing.T) {
	data, err := spec.FS.ReadFile("pack.schema.json")
	require.NoError(t, err)
	var doc struct {
		Defs map[string]map[string]any `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	properties := func(def string) map[string]any {
		props, _ := doc.Defs[def]["properties"].(map[string]any)
		return props
	}
	assert.ElementsMatch(t, Modes, slices.Collect(maps.Keys(properties("modes"))), "the contract's modes")
	for _, mode := range Modes {
		props := properties(mode)
		require.NotNil(t, props, "$defs/%s", mode)
		var want []string
		for _, s := range keySpecs {
			if !s.global && s.appliesTo(mode) {
				want = append(want, s.key.name)
			}
		}
		assert.ElementsMatch(t, want, slices.Collect(maps.Keys(props)), "the keys of $defs/%s", mode)
		for _, s := range keySpecs {
			if prop, ok := props[s.key.name].(map[string]any); ok {
				assert.Contains(t, schemaTypes(doc.Defs, prop), kindJSONType(s.kind), "$defs/%s/%s", mode, s.key.name)
			}
		}
	}
}

// kindJSONType is the JSON type a pack writes a value of the kind as.
func kindJSONType(k valueKind) string {
	switch k {
	case kindCount, kindCountOrZero:
		return "integer"
	case kindCosine:
		return "number"
	case kindBool:
		return "boolean"
	}
	return "string"
}

// schemaTypes are the JSON types a property's schema admits, through its $ref and its enum.
func schemaTypes(defs map[string]map[string]any, prop map[string]any) []string {
	if ref, ok := prop["$ref"].(string); ok {
		return schemaTypes(defs, defs[strings.TrimPrefix(ref, "#/$defs/")])
	}
	var out []string
	switch ty := prop["type"].(type) {
	case string:
		out = append(out, ty)
	case []any:
		for _, v := range ty {
			out = append(out, fmt.Sprint(v))
		}
	}
	enum, _ := prop["enum"].([]any)
	for _, v := range enum {
		switch v.(type) {
		case string:
			out = append(out, "string")
		case bool:
			out = append(out, "boolean")
		}
	}
	return out
}

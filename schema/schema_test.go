package schema

import (
	"errors"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/spec"
)

func TestDecodeNamesLineAndColumn(t *testing.T) {
	cases := []struct {
		name, doc  string
		line, col  int
		reasonPart string
	}{
		{"bad token", "{\n  \"a\": x\n}", 2, 8, "invalid character 'x'"},
		{"unterminated", "{\"a\": 1", 1, 8, "unexpected end of input"},
		{"empty", "", 1, 1, "empty"},
		{"trailing data", "{} {}", 1, 4, "after the JSON value"},
		{"first byte", "]", 1, 1, "invalid character ']'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode("f.json", []byte(tc.doc))
			var se *SyntaxError
			require.True(t, errors.As(err, &se), "got %v", err)
			assert.Equal(t, tc.line, se.Line)
			assert.Equal(t, tc.col, se.Column)
			assert.Contains(t, se.Reason, tc.reasonPart)
			assert.Contains(t, se.Error(), "f.json: line")
		})
	}
}

func TestValidatePackReportsEveryProblemWithPointer(t *testing.T) {
	v, err := New()
	require.NoError(t, err)
	cases := []struct {
		name string
		doc  string
		want []string // pointer: message fragment
	}{
		{"valid portulan 1.0", `{"portulan":{"pack":"1.0","version":"0.1.0"},"name":"github","category":"tools","contributes":{}}`, nil},
		{"missing required", `{"portulan":{"pack":"1.0"}}`, []string{"/: missing properties 'name', 'category', 'contributes'"}},
		{"bad slug", `{"portulan":{"pack":"1.0"},"name":"Git_Hub","category":"tools","contributes":{}}`, []string{`/name: want a slug`}},
		{"bad semver", `{"portulan":{"pack":"1.0","version":"1.0"},"name":"g","category":"tools","contributes":{}}`, []string{`/portulan/version: want a SemVer version`}},
		{"bad category", `{"portulan":{"pack":"1.0"},"name":"g","category":"misc","contributes":{}}`, []string{"/category: value must be one of"}},
		{"path with colon", `{"portulan":{"pack":"1.0"},"name":"g","category":"tools","contributes":{"personas":["c:x.md"]}}`, []string{"/contributes/personas/0: want a path relative"}},
		{"dot slash path", `{"portulan":{"pack":"1.0"},"name":"g","category":"tools","contributes":{"personas":["./x.md"]}}`, []string{"/contributes/personas/0: want a path relative"}},
		{"dotdot path", `{"portulan":{"pack":"1.0"},"name":"g","category":"tools","contributes":{"personas":["../x.md"]}}`, []string{"/contributes/personas/0: want a path relative"}},
		{"skill without slash", `{"portulan":{"pack":"1.0"},"name":"g","category":"tools","contributes":{"skills":["skills"]}}`, []string{"/contributes/skills/0: want a directory"}},
		{"two actions", `{"portulan":{"pack":"1.0"},"name":"g","category":"tools","contributes":{"gates":[{"id":"a","tier":"gated","action":{"read":"","write":""},"reason":"r"}]}}`, []string{"/contributes/gates/0/action: maxProperties"}},
		{"no action", `{"portulan":{"pack":"1.0"},"name":"g","category":"tools","contributes":{"gates":[{"id":"a","tier":"gated","action":{},"reason":"r"}]}}`, []string{"/contributes/gates/0/action: minProperties"}},
		{"unknown mode key", `{"portulan":{"pack":"1.1"},"name":"g","category":"tools","contributes":{"modes":{"dedup":{"treshold":0.5}}}}`, []string{"/contributes/modes/dedup: additional properties 'treshold' not allowed; allowed: 'batch_size', 'embed_model', "}},
		{"a step's key its mode does not take", `{"portulan":{"pack":"1.2"},"name":"g","category":"tools","contributes":{"workflows":{"w":{"steps":[{"name":"a","mode":"summarize","with":{"task":"x"}}]}}}}`,
			[]string{"/contributes/workflows/w/steps/0/with: additional properties 'task' not allowed; allowed: 'file', 'lines', 'symbol'"}},
		{"a key the manifest does not take", `{"portulan":{"pack":"1.0"},"name":"g","category":"tools","contributes":{},"extra":1}`, []string{"/: additional properties 'extra' not allowed; allowed: '$schema', 'category', 'contributes', 'doc', 'name', 'portulan', 'summary'"}},
		{"threshold out of range", `{"portulan":{"pack":"1.1"},"name":"g","category":"tools","contributes":{"modes":{"dedup":{"threshold":2}}}}`, []string{"/contributes/modes/dedup/threshold: maximum"}},
		{"role without tasks", `{"portulan":{"pack":"1.1"},"name":"g","category":"tools","contributes":{"roles":{"code":{}}}}`, []string{"/contributes/roles/code: missing property 'tasks'"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := v.Validate(Pack, "p.json", []byte(tc.doc))
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			var inv *InvalidError
			require.True(t, errors.As(err, &inv), "got %v", err)
			msg := inv.Error()
			for _, w := range tc.want {
				assert.Contains(t, msg, "p.json: "+w)
			}
		})
	}
}

func TestValidateWorkspaceTrustKeys(t *testing.T) {
	v, err := New()
	require.NoError(t, err)
	good := `{"packs":["tools/local-llm"],"trust":{"keys":["ed25519:11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="]}}`
	_, err = v.Validate(Workspace, "w.json", []byte(good))
	require.NoError(t, err)
	bad := `{"packs":["tools/local-llm"],"trust":{"keys":["ed25519:AAAA"]},"extra":1}`
	_, err = v.Validate(Workspace, "w.json", []byte(bad))
	var inv *InvalidError
	require.True(t, errors.As(err, &inv))
	assert.Len(t, inv.Problems, 2)
}

// The keys an object takes are listed where the schema names them all.
func TestNamedKeys(t *testing.T) {
	v, err := New()
	require.NoError(t, err)
	v.docs["u"] = map[string]any{"$defs": map[string]any{
		"named":   map[string]any{"properties": map[string]any{"b": true, "a": true}},
		"pattern": map[string]any{"properties": map[string]any{"a": true}, "patternProperties": map[string]any{"^x": true}},
		"list":    []any{map[string]any{"properties": map[string]any{"c": true}}},
	}}
	assert.Equal(t, []string{"c"}, v.namedKeys("u#/$defs/list/0"), "an element of a list, such as allOf's")
	assert.Empty(t, v.namedKeys("u#/$defs/list/1"))
	assert.Equal(t, []string{"a", "b"}, v.namedKeys("u#/$defs/named"))
	assert.Empty(t, v.namedKeys("u#/$defs/pattern"), "a list would leave out the keys a pattern takes")
	assert.Empty(t, v.namedKeys("u#/$defs/none"))
	assert.Empty(t, v.namedKeys("other#/$defs/named"))
}

func TestProblemStringRootPointer(t *testing.T) {
	assert.Equal(t, "f: /: x", Problem{File: "f", Message: "x"}.String())
	assert.Equal(t, "/a~1b/c~0d", pointer([]string{"a/b", "c~d"}))
}

// TestEverySchemaCompiles covers what New leaves to each schema's first use: each contract in
// spec.FS loads and compiles, also when several are first used at once.
func TestEverySchemaCompiles(t *testing.T) {
	entries, err := fs.Glob(spec.FS, "*.schema.json")
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	v, err := New()
	require.NoError(t, err)
	var wg sync.WaitGroup
	for _, name := range entries {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := v.schema(Name(name))
				assert.NoError(t, err, name)
			}()
		}
	}
	wg.Wait()
}

func TestSpecLoaderServesOnlyTheContracts(t *testing.T) {
	v, err := New()
	require.NoError(t, err)
	l := specLoader{v}
	for _, url := range []string{
		"https://example.com/pack.schema.json",
		baseURL + "../go.mod",
		baseURL + "sub/pack.schema.json",
		baseURL + "missing.schema.json",
	} {
		_, err := l.Load(url)
		assert.Error(t, err, url)
	}
	_, err = l.Load(baseURL + string(Pack))
	assert.NoError(t, err)
}

// A document nested past untrusted.MaxDepth is refused before it is decoded, with where.
func TestDecodeRefusesDeepNesting(t *testing.T) {
	doc := []byte(strings.Repeat(`{"a":`, 65) + "1" + strings.Repeat("}", 65))
	_, err := Decode("w.json", doc)
	var inv *InvalidError
	require.ErrorAs(t, err, &inv)
	assert.Contains(t, err.Error(), "deeper than 64 levels")
}

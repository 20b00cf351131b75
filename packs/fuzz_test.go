package packs

import (
	"testing"
	"testing/fstest"

	"github.com/locumdev/locum/schema"
)

// FuzzLoadManifest feeds untrusted manifests to the loader: it must refuse or accept, never
// panic, and a refusal must be one of the documented error types.
func FuzzLoadManifest(f *testing.F) {
	f.Add([]byte(`{"portulan":{"pack":"1.0","version":"0.1.0"},"name":"github","category":"tools","contributes":{"verify":[{"id":"a","run":"true"}]}}`))
	f.Add([]byte(`{"portulan":{"pack":"1.1"},"name":"x","category":"tools","contributes":{"modes":{"dedup":{"threshold":0.5}},"roles":{"r":{"tasks":["t"]}}}}`))
	f.Add([]byte(`{"portulan":{"pack":"9.9"}}`))
	f.Add([]byte(`{`))
	f.Add([]byte(`{"portulan":{"pack":"1.2"},"name":"x","category":"tools","contributes":{"workflows":{"w":{"params":{"dir":{}},"steps":[{"name":"a","mode":"transform","for_each":{"symbols":"{{dir}}/*.go"},"with":{"task":"{{symbol}} {{steps.a.output}}"}}],"verify":"{{dir}}"}}}}`))
	v, err := schema.New()
	if err != nil {
		f.Fatal(err)
	}
	files := fstest.MapFS{"skills/.keep": {}, "p.md": {Data: []byte("x")}}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := load(v, data, "pack.json", "tools/x", "", files)
		if err == nil && (p.Category != "tools" || p.Name != "x") {
			t.Fatalf("accepted a pack whose directories do not match: %+v", p.Manifest)
		}
	})
}

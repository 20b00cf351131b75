package evals

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// FuzzResolveRouting feeds arbitrary routing files to ResolveRole. Whatever it accepts must be
// exactly what one strict decoding of the bytes says, signed by the trusted key: no second
// reading of the file may route a role to another model.
func FuzzResolveRouting(f *testing.F) {
	root, _, trust := workspaceWithRouting(f, true)
	signed, err := os.ReadFile(filepath.Join(root, RoutingFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(signed)
	f.Add(append([]byte(`{"roles":{"code":{"enabled":true,"model":"evil","effort":"low","tasks":["code"]}},`), bytes.TrimPrefix(bytes.TrimSpace(signed), []byte("{"))...))
	f.Add(bytes.Replace(signed, []byte(`"roles"`), []byte(`"Roles"`), 1))
	f.Add([]byte(`{}`))
	v, err := schema.New()
	if err != nil {
		f.Fatal(err)
	}
	file := filepath.Join(root, RoutingFile)
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		route, err := ResolveRole(v, root, trust, "code", packs.Role{Effort: "low"})
		if err != nil {
			return
		}
		var doc map[string]any
		if err := untrusted.Unmarshal(data, &doc); err != nil {
			t.Fatalf("a file with a key named twice routed %s: %v", route.Model, err)
		}
		if err := Verify(doc, trust); err != nil {
			t.Fatalf("an unverified file routed %s: %v", route.Model, err)
		}
		var r Routing
		if err := json.Unmarshal(data, &r); err != nil || r.Roles["code"].Model != route.Model {
			t.Fatalf("routed %s, but the file says %q (%v)", route.Model, r.Roles["code"].Model, err)
		}
	})
}

package evals

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/schema"
)

// workspaceWithRouting writes an A/B record and a routing file signed by a key made here.
func workspaceWithRouting(t testing.TB, enabled bool) (root string, key ed25519.PrivateKey, trust []string) {
	t.Helper()
	return workspaceWithRecord(t, enabled, recordBody(t, EarnK, nil))
}

// recordBody is the part of a record routing reads back: k and the fingerprints, the current ones
// with changed applied.
func recordBody(t testing.TB, k int, changed map[string]string) []byte {
	t.Helper()
	fps := map[string]string{}
	for _, task := range Tasks() {
		fps[task.ID] = task.Fingerprint()
	}
	for id, fp := range changed {
		fps[id] = fp
	}
	data, err := json.Marshal(map[string]any{"k": k, "fingerprints": fps})
	require.NoError(t, err)
	return data
}

func workspaceWithRecord(t testing.TB, enabled bool, body []byte) (root string, key ed25519.PrivateKey, trust []string) {
	t.Helper()
	root = t.TempDir()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	record := filepath.Join(root, ".locum", "evals", "ab", "local-worker.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(record), 0o755))
	require.NoError(t, os.WriteFile(record, body, 0o644))
	sum, err := FileSHA256(record)
	require.NoError(t, err)
	var r Routing
	r.Version = 1
	r.Record.Path, r.Record.SHA256 = ".locum/evals/ab/local-worker.json", sum
	r.Roles = map[string]RoutedRole{
		"code":  {Enabled: enabled, Model: "qwen3-coder-30b", Effort: "low", Tasks: []string{"code"}},
		"prose": {Enabled: false, Model: "qwen3-coder-30b", Effort: "low", Tasks: []string{"codify", "handoff"}, Reason: "codify L0/H3"},
	}
	require.NoError(t, SignRouting(root, r, func(doc map[string]any) error { return Sign(doc, key) }))
	return root, key, []string{FormatPublicKey(key.Public().(ed25519.PublicKey))}
}

func TestResolveRole(t *testing.T) {
	v, err := schema.New()
	require.NoError(t, err)
	code := packs.Role{Tasks: []string{"code"}, Effort: "low"}

	root, _, trust := workspaceWithRouting(t, true)
	route, err := ResolveRole(v, root, trust, "code", code)
	require.NoError(t, err)
	assert.Equal(t, Route{Role: "code", Model: "qwen3-coder-30b", Effort: "low"}, route)

	otherKey, _, _ := ed25519.GenerateKey(rand.Reader)
	edit := func(t *testing.T, root, from, to string) {
		file := filepath.Join(root, RoutingFile)
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		require.Contains(t, string(data), from)
		require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(data), from, to, 1)), 0o644))
	}
	// Each case starts from a good workspace trusting its own signer; setup may change files and
	// returns the trusted keys to use (nil keeps the signer's).
	cases := []struct {
		name  string
		setup func(t *testing.T, root string) []string
		role  string
		want  string
	}{
		{"missing file", func(t *testing.T, root string) []string { os.Remove(filepath.Join(root, RoutingFile)); return nil }, "code", ".locum/routing.json is missing"},
		{"untrusted key", func(t *testing.T, root string) []string { return []string{FormatPublicKey(otherKey)} }, "code", "which .locum/workspace.json does not list in trust.keys"},
		{"no trusted keys at all", func(t *testing.T, root string) []string { return []string{} }, "code", "does not list in trust.keys"},
		{"edited model", func(t *testing.T, root string) []string {
			edit(t, root, `"qwen3-coder-30b"`, `"other-model"`)
			return nil
		}, "code", "edited after signing"},
		{"unsigned", func(t *testing.T, root string) []string { edit(t, root, `"signature"`, `"unsigned"`); return nil }, "code", "not signed"},
		{"role not enabled", func(t *testing.T, root string) []string { return nil }, "prose", "not enabled: the A/B record did not earn it (codify L0/H3)"},
		{"role not named", func(t *testing.T, root string) []string { return nil }, "review", "does not name it"},
		{"record changed", func(t *testing.T, root string) []string {
			require.NoError(t, os.WriteFile(filepath.Join(root, ".locum/evals/ab/local-worker.json"), []byte(`{"k":6}`), 0o644))
			return nil
		}, "code", "changed since the routing was signed"},
		{"not JSON", func(t *testing.T, root string) []string {
			require.NoError(t, os.WriteFile(filepath.Join(root, RoutingFile), []byte(`{`), 0o644))
			return nil
		}, "code", "invalid JSON"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, _, own := workspaceWithRouting(t, true)
			tr := own
			if override := tc.setup(t, root); override != nil {
				tr = override
			}
			_, err := ResolveRole(v, root, tr, tc.role, code)
			var refusal *engine.RefusalError
			require.True(t, errors.As(err, &refusal), "got %v", err)
			assert.Contains(t, refusal.Error(), tc.want)
			assert.Contains(t, refusal.Error(), "locum roles accept "+tc.role+" MODEL")
			assert.NotContains(t, refusal.Error(), "--", "a refusal names commands, never a flag: an MCP host reads it too")
		})
	}
	// A signed, trusted routing file that enables a role still refuses it when the record it rests
	// on could not earn it: too few turns, or a task whose prompt changed since.
	thin := []struct {
		name string
		body func(t *testing.T) []byte
		want string
	}{
		{"k below 5", func(t *testing.T) []byte { return recordBody(t, 1, nil) }, "cannot earn it: k=1: a record earns routing at k=5"},
		{"prompt changed", func(t *testing.T) []byte {
			return recordBody(t, EarnK, map[string]string{"code": strings.Repeat("0", 64)})
		}, "cannot earn it: task code changed since capture"},
		{"no fingerprints", func(t *testing.T) []byte { return []byte(`{"k":5}`) }, "task code changed since capture"},
	}
	for _, tc := range thin {
		t.Run(tc.name, func(t *testing.T) {
			root, _, own := workspaceWithRecord(t, true, tc.body(t))
			_, err := ResolveRole(v, root, own, "code", code)
			var refusal *engine.RefusalError
			require.True(t, errors.As(err, &refusal), "got %v", err)
			assert.Contains(t, refusal.Error(), tc.want)
		})
	}
	t.Run("a changed prompt of another role's task", func(t *testing.T) {
		root, _, own := workspaceWithRecord(t, true, recordBody(t, EarnK, map[string]string{"codify": strings.Repeat("0", 64)}))
		_, err := ResolveRole(v, root, own, "code", code)
		assert.NoError(t, err)
	})
	t.Run("effort other than the pack's", func(t *testing.T) {
		root, _, own := workspaceWithRouting(t, true)
		_, err := ResolveRole(v, root, own, "code", packs.Role{Effort: "high"})
		assert.ErrorContains(t, err, "measured at effort low, but the pack runs it at high")
	})
}

func TestKeygenWritesKeysTheWorkspaceCanTrust(t *testing.T) {
	file := filepath.Join(t.TempDir(), "signing.key")
	pub, err := GenerateKey(file)
	require.NoError(t, err)
	st, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	line, err := os.ReadFile(file + ".pub")
	require.NoError(t, err)
	assert.Equal(t, pub+"\n", string(line))
	v, err := schema.New()
	require.NoError(t, err)
	_, err = v.Validate(schema.Workspace, "w", []byte(`{"packs":[],"trust":{"keys":["`+pub+`"]}}`))
	require.NoError(t, err)
	key, err := LoadPrivateKey(file)
	require.NoError(t, err)
	doc := map[string]any{"a": 1}
	require.NoError(t, Sign(doc, key))
	require.NoError(t, Verify(doc, []string{pub}))
	_, err = GenerateKey(file)
	assert.Error(t, err, "a key is never overwritten")
}

// The weights an earned route carries are the record's identity of the model it measured.
func TestRecordWeights(t *testing.T) {
	tests := []struct {
		name, record, model, want string
	}{
		{"the model's identity", `{"local":{"digests":{"m":"sha256:5c7ac4aead1b","o":"x"}}}`, "m", "sha256:5c7ac4aead1b"},
		{"no identity for the model", `{"local":{"digests":{"o":"x"}}}`, "m", ""},
		{"a record with no digests", `{"local":{}}`, "m", ""},
		{"a key named twice is no identity", `{"local":{"digests":{"m":"a","m":"b"}}}`, "m", ""},
		{"not JSON", `{`, "m", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, recordWeights([]byte(tt.record), tt.model))
		})
	}
}

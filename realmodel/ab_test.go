//go:build realmodel

package realmodel

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
)

// TestABCaptureOnARealModel captures a signed k = 5 A/B record with the real model as arm L and a
// scripted host that always answers well as arm H: 20 real turns. The record says whose evidence
// it is (the weights as llama-server describes them), verifies with no model, and enables a role
// only where every local turn of its tasks passed.
func TestABCaptureOnARealModel(t *testing.T) {
	s := shared
	dir := t.TempDir()
	home := t.TempDir()
	gittest.Init(t, dir)
	host, err := filepath.Abs(filepath.Join("testdata", "ab", "host.sh"))
	require.NoError(t, err)
	key := filepath.Join(home, "signing.key")
	r := s.locumIn(t, dir, home, "eval", "keygen", "--out", key)
	require.Equal(t, 0, r.exit, r.stderr)
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".config", "locum"), 0o700))
	cfg, err := json.Marshal(map[string]string{"signing_key": key})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(home, ".config", "locum", "config.json"), cfg, 0o600))
	// The maintainer's workspace lists the key, so the routing it signs routes for everyone.
	r = s.locumIn(t, dir, home, "init")
	require.Equal(t, 0, r.exit, "init:\n%s", r.stderr)
	wsFile := filepath.Join(dir, ".locum", "workspace.json")
	data, err := os.ReadFile(wsFile)
	require.NoError(t, err)
	var ws map[string]any
	require.NoError(t, json.Unmarshal(data, &ws))
	pub, err := os.ReadFile(key + ".pub")
	require.NoError(t, err)
	ws["trust"] = map[string]any{"keys": []string{strings.TrimSpace(string(pub))}}
	data, err = json.MarshalIndent(ws, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(wsFile, data, 0o644))

	before := s.chat.rec.Len()
	r = s.locumIn(t, dir, home, "eval", "--ab", "--k", "5", "--seed", "7", "--model", s.model, "--max-output-tokens", "1024",
		"--host-cmd", host+" -p", "--host-model", "scripted-host", "--write")
	t.Logf("eval --ab:\n%s%s", r.stdout, r.stderr)
	require.Equal(t, 0, r.exit, "the capture did not finish:\n%s", r.stderr)
	s.chat.rec.WaitLen(before + 20)
	assert.Equal(t, 20, s.chat.rec.Len()-before, "one real request per local turn")

	data, err = os.ReadFile(filepath.Join(dir, ".locum", "evals", "ab", "local-worker.json"))
	require.NoError(t, err)
	var rec struct {
		K     int
		Local struct {
			Models  map[string]string
			Digests map[string]string
		}
		Turns []struct {
			Arm, Task string
			Passed    bool
		}
		Cells map[string]map[string]struct{ Completed, Passed int }
	}
	require.NoError(t, json.Unmarshal(data, &rec))
	assert.Equal(t, 5, rec.K)
	assert.Len(t, rec.Turns, 40)
	weights := rec.Local.Digests[s.model]
	assert.Contains(t, weights, filepath.Base(s.man.ChatModel.Path), "the record names the real model's weights")
	assert.NotContains(t, weights, string(filepath.Separator), "the record keeps no directory of the operator's")
	register, err := os.ReadFile(filepath.Join(dir, ".locum", "evals", "ab", "local-worker.md"))
	require.NoError(t, err)
	assert.Contains(t, string(register), "weights `"+weights+"` as the server describes them")
	for task, arms := range rec.Cells {
		assert.Equal(t, 5, arms["H"].Passed, "the scripted host passes %s every time", task)
		t.Logf("real model, task %s: %d of 5 local turns passed", task, arms["L"].Passed)
	}

	r = s.locumIn(t, dir, home, "eval", "--verify")
	require.Equal(t, 0, r.exit, "the real record does not verify:\n%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, "40 turns, k=5, 0 findings")
	// The routing the record wrote enables a role exactly when every local turn of its tasks
	// passed, and the roles the person sees say the same.
	data, err = os.ReadFile(filepath.Join(dir, ".locum", "routing.json"))
	require.NoError(t, err)
	var routing struct {
		Roles map[string]struct {
			Enabled bool
			Tasks   []string
		}
	}
	require.NoError(t, json.Unmarshal(data, &routing))
	require.NotEmpty(t, routing.Roles)
	r = s.locumIn(t, dir, home, "roles", "--json")
	require.Equal(t, 0, r.exit, r.stderr)
	var roles struct {
		Roles []struct{ Role, Routing string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &roles), r.stdout)
	shown := map[string]string{}
	for _, ro := range roles.Roles {
		shown[ro.Role] = ro.Routing
	}
	for role, rr := range routing.Roles {
		earned := len(rr.Tasks) > 0
		for _, task := range rr.Tasks {
			earned = earned && rec.Cells[task]["L"].Passed == rec.K
		}
		assert.Equal(t, earned, rr.Enabled, "role %s: enabled disagrees with its cells", role)
		assert.Equal(t, earned, shown[role] == "earned", "role %s: locum roles shows %s", role, shown[role])
	}
}

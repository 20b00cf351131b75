package evals

import (
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/schema"
)

// A record captured before a task shipped, intact and signed, fails --verify by naming the task it
// never measured (and the short matrix), not as a record that was tampered with.
func TestVerifyNamesATaskTheRecordPredates(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(exampleDir, ".locum/evals/ab/local-worker.json"))
	require.NoError(t, err)
	var rec Record
	require.NoError(t, json.Unmarshal(data, &rec))
	var turns []Turn
	for _, turn := range rec.Turns {
		if turn.Task != "agent" {
			turns = append(turns, turn)
		}
	}
	rec.Turns = turns
	delete(rec.Fingerprints, "agent")
	delete(rec.Local.Models, "agent")
	rec.Cells = FoldCells(rec.Turns)

	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	roles := (&packs.Composition{Packs: []*packs.Pack{p}}).Roles()
	root := t.TempDir()
	key := exampleKey()
	signed, err := MarshalSigned(&rec, key)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(RecordPath(root, rec.Name)), 0o755))
	require.NoError(t, os.WriteFile(RecordPath(root, rec.Name), signed, 0o644))
	require.NoError(t, os.WriteFile(RegisterPath(root, rec.Name), RenderRegister(&rec, roles), 0o644))

	sv, err := schema.New()
	require.NoError(t, err)
	v, err := VerifyRecord(sv, root, rec.Name, []string{FormatPublicKey(key.Public().(ed25519.PublicKey))}, roles, false)
	require.NoError(t, err)
	var fails []string
	for _, f := range v.Findings {
		if f.Fail {
			fails = append(fails, f.Text)
		}
	}
	assert.Equal(t, []string{
		"the matrix holds 30 turns; 4 tasks x 2 arms x k=5 is 40",
		"task agent is not in the record: it shipped after the capture, so the record measured none of it; routing of a role naming it is refused until a new capture",
	}, fails)
	assert.False(t, v.Routing["agent"].Enabled)
	assert.True(t, v.Routing["code"].Enabled, v.Routing["code"].Reason)
	assert.True(t, strings.HasPrefix(v.Routing["agent"].Reason, "agent L0/H0"), v.Routing["agent"].Reason)
}

package evals

import (
	"crypto/ed25519"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/schema"
)

// The ledger's accessor reads a record's measured direct cost per task and per role, only from a
// record signed by a key the operator trusts whose usage holds.
func TestLoadHostArmUsage(t *testing.T) {
	o, rec := captureWithHost(t, claudeOutputs(t))
	sv, err := schema.New()
	require.NoError(t, err)
	trusted := TrustedKeys{Keys: []string{FormatPublicKey(o.Key.Public().(ed25519.PublicKey))}}
	path := RecordPath(o.Root, o.Name)
	data, err := os.ReadFile(path)
	require.NoError(t, err)

	got, err := LoadHostArmUsage(sv, o.Root, o.Name, trusted, o.Roles)
	require.NoError(t, err)
	assert.Equal(t, ".locum/evals/ab/local-worker.json", got.Record)
	assert.Equal(t, sha256Hex(data), got.SHA256)
	require.Len(t, got.Tasks, 4)
	assert.Equal(t, HostCost{Tasks: []string{"code"}, Role: "code", Method: MethodMeasured, Measured: 1, Samples: 1, NumTurns: 2, InputTokens: 10,
		CacheCreationInputTokens: 2000, CacheReadInputTokens: 40000, OutputTokens: 500, USD: 0.015}, got.Tasks[0])
	prose, ok := got.Role("prose")
	require.True(t, ok)
	assert.Equal(t, []string{"codify", "handoff"}, prose.Tasks)
	assert.Equal(t, 2, prose.Measured)
	assert.Equal(t, 2, prose.Samples)
	assert.Equal(t, 3.5, prose.NumTurns, "the mean of codify's 3 and handoff's 4")
	assert.InDelta(t, 0.03, prose.USD, 1e-12)
	assert.Equal(t, "3.5 turns, 42512 tokens, $0.0300 (measured, the mean of 2 A/B samples)", prose.String())
	agent, ok := got.Role("agent")
	require.True(t, ok)
	assert.Equal(t, 5.0, agent.NumTurns)

	// A key the repository lists for itself, or none, gives no figure.
	_, err = LoadHostArmUsage(sv, o.Root, o.Name, TrustedKeys{Vouched: trusted.Keys}, o.Roles)
	var untrustedKey *UntrustedKeyError
	assert.True(t, errors.As(err, &untrustedKey), "got %v", err)
	_, err = LoadHostArmUsage(sv, o.Root, "other", trusted, o.Roles)
	var missing *MissingRecordError
	assert.True(t, errors.As(err, &missing), "got %v", err)

	// A figure changed after signing gives none.
	tampered := strings.Replace(string(data), `"cache_read_input_tokens": 40000`, `"cache_read_input_tokens": 4000`, 1)
	require.NotEqual(t, string(data), tampered)
	require.NoError(t, os.WriteFile(path, []byte(tampered), 0o644))
	_, err = LoadHostArmUsage(sv, o.Root, o.Name, trusted, o.Roles)
	assert.ErrorIs(t, err, ErrBadSignature)

	// Nor does usage that does not hold, signed or not.
	r := *rec
	r.Turns = append([]Turn(nil), rec.Turns...)
	r.Turns[0].HostUsage = &HostUsage{Method: MethodMeasured}
	r.Cells = FoldCells(r.Turns)
	signed, err := MarshalSigned(&r, o.Key)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, signed, 0o644))
	_, err = LoadHostArmUsage(sv, o.Root, o.Name, trusted, o.Roles)
	var bad *HostUsageError
	require.True(t, errors.As(err, &bad), "got %v", err)
	assert.Equal(t, []string{"turn L/code/1 carries host usage, but it is not a host turn"}, bad.Problems)
}

// A record whose host printed plain text has no measured cost to give.
func TestLoadHostArmUsageOfAPlainTextHost(t *testing.T) {
	out := map[string]string{}
	for _, task := range Tasks() {
		out[task.ID] = *goodAnswer(t, task.ID)
	}
	o, _ := captureWithHost(t, out)
	sv, err := schema.New()
	require.NoError(t, err)
	got, err := LoadHostArmUsage(sv, o.Root, o.Name, TrustedKeys{Keys: []string{FormatPublicKey(o.Key.Public().(ed25519.PublicKey))}}, o.Roles)
	require.NoError(t, err)
	assert.Empty(t, got.Tasks)
	assert.Empty(t, got.Roles)
}

func TestHostArmUsageLeavesOutStaleTasks(t *testing.T) {
	u := &HostUsage{Method: MethodMeasured, NumTurns: 4, InputTokens: 1, OutputTokens: 1, TotalCostUSD: 0.5}
	rec := &Record{K: 1, Fingerprints: currentFingerprints(), Turns: []Turn{
		{Arm: ArmHost, Task: "code", Run: 1, HostUsage: u},
		{Arm: ArmHost, Task: "codify", Run: 1, HostUsage: u},
		{Arm: ArmHost, Task: "handoff", Run: 1},
	}}
	rec.Fingerprints["codify"] = strings.Repeat("0", 64)
	roles := map[string]packs.Role{"code": {Tasks: []string{"code"}}, "prose": {Tasks: []string{"codify", "handoff"}}}
	got := HostArmUsage(rec, roles)
	assert.Equal(t, []string{"codify"}, got.Stale)
	require.Len(t, got.Tasks, 1)
	assert.Equal(t, "code", got.Tasks[0].Role)
	_, ok := got.Role("prose")
	assert.False(t, ok, "prose's one measured task is stale, and handoff printed no usage")
}

package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/ledger"
)

// The ledger tool measures the host's own usage only where the operator named its transcripts
// (here by the server's environment); a call cannot name them.
func TestLedgerMeasuresOnlyTheOperatorsTranscripts(t *testing.T) {
	f := newFixture(t, false)
	runs := filepath.Join(f.root, ".git", "locum", "runs")
	require.NoError(t, os.MkdirAll(runs, 0o755))
	files, err := filepath.Glob("../runner/ledger/testdata/hostruns/*.jsonl")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	key, err := engine.JournalKey(func(k string) (string, bool) { v, ok := f.env[k]; return v, ok }, true)
	require.NoError(t, err)
	for _, name := range files {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		dst := filepath.Join(runs, filepath.Base(name))
		require.NoError(t, os.WriteFile(dst, data, 0o644))
		require.NoError(t, engine.SealJournal(dst, strings.TrimSuffix(filepath.Base(name), ".jsonl"), key))
	}
	transcripts, err := filepath.Abs("../runner/hostusage/testdata/claude")
	require.NoError(t, err)

	res, err := f.call(t, context.Background(), "ledger", nil, nil)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.NotContains(t, structured(t, res), "host")
	assert.NotContains(t, text(res), "measured")

	// An argument naming them is no argument of the tool.
	res, err = f.call(t, context.Background(), "ledger", map[string]any{"host_transcripts": transcripts}, nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), `unexpected additional properties ["host_transcripts"]`)

	f.env["LOCUM_HOST_TRANSCRIPTS"] = transcripts
	res, err = f.call(t, context.Background(), "ledger", nil, nil)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.Contains(t, text(res), "; measured from your own usage: 6 runs joined to your calls, their turns 275582 tokens, $0.1656; your context around them 37333 tokens")
	host := structured(t, res)["host"].(map[string]any)
	assert.EqualValues(t, 6, host["joined"])
	assert.EqualValues(t, 11*ledger.ToolListTokens(cost.Defaults()), host["standing"].(map[string]any)["tokens"], "the tool list on each of the 11 requests of the sessions that used it")
}

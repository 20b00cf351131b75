package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
)

// The result has every pair; the journal keeps the top JournalPairs and the count, so a screen
// with a million pairs does not write a record of tens of megabytes.
func TestJournalKeepsTheTopPairs(t *testing.T) {
	dir := t.TempDir()
	for i := range 20 { // 190 pairs of identical texts
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d.md", i)), []byte("the same words in every file"), 0o644))
	}
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	c := &packs.Composition{Packs: []*packs.Pack{p}}
	settings, err := c.Resolve("dedup", nil, map[string]string{"method": "lexical"})
	require.NoError(t, err)
	journal := filepath.Join(t.TempDir(), "j.jsonl")
	var found DedupResult
	res := Execute(context.Background(), RunSpec{Mode: "dedup", Settings: settings, JournalPath: journal},
		DedupSteps(DedupOptions{Dir: dir}, &found))
	require.Nil(t, res.Error)
	assert.Len(t, found.Pairs, 190)
	assert.Len(t, res.Details["pairs"], 190)
	data, err := os.ReadFile(journal)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var end struct {
		Event   string `json:"event"`
		Details struct {
			Pairs []Pair `json:"pairs"`
			Total int    `json:"pairs_total"`
		} `json:"details"`
	}
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &end))
	assert.Equal(t, "run_end", end.Event)
	assert.Len(t, end.Details.Pairs, JournalPairs)
	assert.Equal(t, 190, end.Details.Total)
}

// A dedup tells an observer how far it is: the scoring of its entries (and, with a server, each
// batch sent to embed).
func TestDedupReportsScoring(t *testing.T) {
	dir := t.TempDir()
	for i := range 3 {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.md", i)), []byte("some words here"), 0o644))
	}
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	settings, err := (&packs.Composition{Packs: []*packs.Pack{p}}).Resolve("dedup", nil, map[string]string{"method": "lexical"})
	require.NoError(t, err)
	var seen []ProgressEvent
	res := Execute(context.Background(), RunSpec{Mode: "dedup", Settings: settings, JournalPath: filepath.Join(t.TempDir(), "j.jsonl"),
		Observer: ObserverFunc(func(ev ProgressEvent) { seen = append(seen, ev) })},
		DedupSteps(DedupOptions{Dir: dir}, &DedupResult{}))
	require.Nil(t, res.Error)
	require.NotEmpty(t, seen)
	assert.Equal(t, StageScore, seen[len(seen)-1].Stage)
	assert.Equal(t, 3, seen[len(seen)-1].Total)
}

package dedup

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
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

// Listing pairs, the result has every pair; the journal keeps the top JournalPairs and the count, so a screen
// with a million pairs does not write a record of tens of megabytes. A screen by groups lists no pair in
// its result, and its journal keeps its groups, its top pairs and their count.
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
	for _, byPairs := range []bool{true, false} {
		t.Run(fmt.Sprint("pairs=", byPairs), func(t *testing.T) {
			journal := filepath.Join(t.TempDir(), "j.jsonl")
			var found Result
			res := engine.Execute(context.Background(), engine.RunSpec{Mode: "dedup", Settings: settings, JournalPath: journal},
				Steps(Options{Dir: dir, Pairs: byPairs}, &found))
			require.Nil(t, res.Error)
			details := res.Details.(*Details)
			if byPairs {
				assert.Len(t, found.Pairs, 190)
				assert.Len(t, details.Pairs, 190)
				assert.Nil(t, details.PairsTotal, "the result lists every pair")
			} else {
				assert.Nil(t, details.Pairs)
				assert.Len(t, details.Groups, 1)
				require.NotNil(t, details.PairsTotal)
				assert.Equal(t, 190, *details.PairsTotal)
			}
			data, err := os.ReadFile(journal)
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSpace(string(data)), "\n")
			var end struct {
				Event   string          `json:"event"`
				Details json.RawMessage `json:"details"`
			}
			require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &end))
			assert.Equal(t, "run_end", end.Event)
			kept := engine.DecodeDetails[Details](end.Details)
			assert.Len(t, kept.Pairs, JournalPairs)
			require.NotNil(t, kept.PairsTotal)
			assert.Equal(t, 190, *kept.PairsTotal)
			require.Len(t, kept.Groups, len(details.Groups))
			for i, g := range details.Groups {
				assert.Equal(t, g.Files, kept.Groups[i].Files)
			}
		})
	}
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
	var seen []engine.ProgressEvent
	res := engine.Execute(context.Background(), engine.RunSpec{Mode: "dedup", Settings: settings, JournalPath: filepath.Join(t.TempDir(), "j.jsonl"),
		Observer: engine.ObserverFunc(func(ev engine.ProgressEvent) { seen = append(seen, ev) })},
		Steps(Options{Dir: dir}, &Result{}))
	require.Nil(t, res.Error)
	require.NotEmpty(t, seen)
	assert.Equal(t, engine.StageScore, seen[len(seen)-1].Stage)
	assert.Equal(t, 3, seen[len(seen)-1].Total)
}

// The cache is keyed by server kind, endpoint, model and digest: a llama-server and then an
// Ollama at the same address, both asked for "tiny", share no vectors; nor do two Ollama models
// of one name with different digests. The same server and model hit the cache every time.
func TestEmbeddingCacheKeyedByServerAndDigest(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	dir := filepath.Join(root, "notes")
	require.NoError(t, os.Mkdir(dir, 0o755))
	for _, name := range []string{"a.md", "b.md", "c.md"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("text of "+name), 0o644))
	}
	s := scripted.New()
	defer s.Close()
	s.On("POST", "/v1/embeddings", runtest.JSON(`{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0.8,0.6]},{"index":2,"embedding":[0,1]}]}`))
	tags := func(digest string) scripted.Reply {
		return runtest.JSON(`{"models":[{"name":"tiny:latest","model":"tiny:latest","digest":"` + digest + `"}]}`)
	}
	cache := VectorCache{Path: filepath.Join(t.TempDir(), CacheFileName)}
	run := func() (Result, []string) {
		t.Helper()
		var found Result
		spec := engine.RunSpec{Mode: "dedup", Root: root, Settings: runtest.Settings(t, "dedup", map[string]string{"base-url": s.BaseURL(), "model": "tiny"}), Model: "tiny",
			JournalPath: filepath.Join(t.TempDir(), "j.jsonl")}
		res := engine.Execute(context.Background(), spec, Steps(Options{Dir: dir, Root: root, Cache: cache}, &found))
		require.Nil(t, res.Error)
		assert.Equal(t, found.Cached, res.Details.(*Details).Cached)
		journal, err := os.ReadFile(spec.JournalPath)
		require.NoError(t, err)
		return found, strings.Split(string(journal), "\n")
	}
	cacheEvent := func(lines []string) string {
		for _, l := range lines {
			if strings.Contains(l, `"event":"cache"`) {
				return l
			}
		}
		return ""
	}

	require.NoError(t, s.Mimic("llama-server"))
	first, journal := run()
	assert.Equal(t, 0, first.Cached)
	assert.Contains(t, cacheEvent(journal), `"server":"llama-server"`)
	again, _ := run()
	assert.Equal(t, 3, again.Cached, "the same server and model")

	require.NoError(t, s.Mimic("ollama"))
	s.On("GET", "/api/tags", tags("sha256:aaaa"))
	ollama, journal := run()
	assert.Equal(t, 0, ollama.Cached, "another server kind at the same address")
	assert.Contains(t, cacheEvent(journal), `"digest":"sha256:aaaa"`)
	again, _ = run()
	assert.Equal(t, 3, again.Cached)

	s.On("GET", "/api/tags", tags("sha256:bbbb"))
	replaced, _ := run()
	assert.Equal(t, 0, replaced.Cached, "the model was replaced under its name")
}

//go:build realmodel

package realmodel

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
)

// labelled is the dedup corpus's labels.json.
type labelled struct {
	Groups [][]string `json:"groups"`
	Pairs  []struct {
		A, B      string
		Kind      string
		Duplicate bool
	} `json:"pairs"`
}

// TestDedupEmbeddingOnARealModel screens the labelled corpus with all-MiniLM-L6-v2's real vectors
// at the default threshold: every labelled duplicate is listed, no same-topic note with other
// text and no note of another topic is. A second run scores every pair from the cache, with no
// request, for the table of scores per kind.
func TestDedupEmbeddingOnARealModel(t *testing.T) {
	s := shared
	corpus := filepath.Join("..", "runner", "dedup", "testdata", "labelled")
	data, err := os.ReadFile(filepath.Join(corpus, "labels.json"))
	require.NoError(t, err)
	var labels labelled
	require.NoError(t, json.Unmarshal(data, &labels))

	repo := t.TempDir()
	notes := filepath.Join(repo, "notes")
	require.NoError(t, os.MkdirAll(notes, 0o755))
	entries, err := filepath.Glob(filepath.Join(corpus, "*.md"))
	require.NoError(t, err)
	files := 0
	for _, e := range entries {
		if filepath.Base(e) == "README.md" {
			continue
		}
		b, err := os.ReadFile(e)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(notes, filepath.Base(e)), b, 0o644))
		files++
	}
	gittest.Init(t, repo)
	home := t.TempDir()
	args := []string{"dedup", "--dir", "notes", "--method", "embedding", "--model", embedModel, "--base-url", s.embed.BaseURL(), "--json", "--pairs"}

	before := s.embed.rec.Len()
	r := s.locumIn(t, repo, home, args...)
	require.Equal(t, 0, r.exit, r.stderr)
	type pairs struct {
		Pairs []struct {
			Score float64
			A, B  string
		}
		Threshold float64
		Files     int
		Cached    int
		Method    string
	}
	details := func(stdout string) pairs {
		var res struct{ Details pairs }
		require.NoError(t, json.Unmarshal([]byte(stdout), &res), stdout)
		return res.Details
	}
	first := details(r.stdout)
	assert.Contains(t, []string{"exact", "lsh"}, first.Method, "scored by embeddings")
	assert.Equal(t, files, first.Files)
	s.embed.rec.WaitLen(before + 1)
	assert.NotZero(t, s.embed.rec.Len()-before, "the first run embeds through the server")

	key := func(a, b string) string {
		if a > b {
			a, b = b, a
		}
		return a + " " + b
	}
	listed := map[string]float64{}
	for _, p := range first.Pairs {
		listed[key(p.A, p.B)] = p.Score
	}
	// A labelled pair's A is the topic's first note; a note in no pair is a topic of its own.
	topics := map[string]string{}
	for _, p := range labels.Pairs {
		topics[p.A], topics[p.B] = p.A, p.A
	}
	topic := func(name string) string {
		if t, ok := topics[name]; ok {
			return t
		}
		return name
	}
	// A note pasted inside one more than twice its length is a duplicate the vectors of a whole
	// file do not find: all-MiniLM-L6-v2 scored those pairs from 0.504 to 0.809, across the
	// same-topic notes' 0.217 to 0.622, so no threshold lists them and only them; the lexical
	// screen finds them by the share of shingles inside. They are left out of what this screen
	// must list, and their scores are logged with the rest.
	pasted := map[string]bool{}
	for _, p := range labels.Pairs {
		if p.Kind == "pasted inside a longer note" {
			pasted[p.B] = true
		}
	}
	for _, p := range labels.Pairs {
		_, ok := listed[key(p.A, p.B)]
		if pasted[p.B] {
			continue
		}
		if p.Duplicate {
			assert.True(t, ok, "%s (%s) is not listed at the default threshold %v", key(p.A, p.B), p.Kind, first.Threshold)
		} else {
			assert.False(t, ok, "%s (%s) is listed at the default threshold %v", key(p.A, p.B), p.Kind, first.Threshold)
		}
	}
	// Every pair inside a group of duplicates is listed, variant with variant too, and nothing
	// outside one: not a same-topic note with other text, not notes of two topics.
	group := map[string]int{}
	for i, g := range labels.Groups {
		for _, m := range g {
			group[m] = i + 1
		}
		for x := range g {
			for y := x + 1; y < len(g); y++ {
				if pasted[g[x]] || pasted[g[y]] {
					continue
				}
				_, ok := listed[key(g[x], g[y])]
				assert.True(t, ok, "%s: two duplicates of one note not listed", key(g[x], g[y]))
			}
		}
	}
	for k := range listed {
		ab := strings.Fields(k)
		assert.True(t, group[ab[0]] != 0 && group[ab[0]] == group[ab[1]], "%s: listed, but not two duplicates of one note", k)
	}

	// Every pair, from the cache: the scores per kind.
	before = s.embed.rec.Len()
	r = s.locumIn(t, repo, home, append(args, "--threshold", "-1")...)
	require.Equal(t, 0, r.exit, r.stderr)
	all := details(r.stdout)
	assert.Equal(t, files, all.Cached, "the second run reads every embedding from the cache")
	assert.Equal(t, before, s.embed.rec.Len(), "the second run sends no request")
	assert.Len(t, all.Pairs, files*(files-1)/2)
	score := map[string]float64{}
	for _, p := range all.Pairs {
		score[key(p.A, p.B)] = p.Score
	}
	kinds := map[string][]float64{}
	for _, p := range labels.Pairs {
		kinds[p.Kind] = append(kinds[p.Kind], score[key(p.A, p.B)])
	}
	for k, v := range score {
		if ab := strings.Fields(k); topic(ab[0]) != topic(ab[1]) {
			kinds["unrelated"] = append(kinds["unrelated"], v)
		}
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	var table strings.Builder
	fmt.Fprintf(&table, "dedup --method embedding on %s (%d files) with %s, default threshold %v:\n", corpus, files, s.man.EmbedModel.Name, first.Threshold)
	for _, k := range names {
		v := kinds[k]
		sort.Float64s(v)
		fmt.Fprintf(&table, "  %-28s %3d pairs  scores %.3f to %.3f\n", k, len(v), v[0], v[len(v)-1])
	}
	t.Log("\n" + table.String())
}

// TestDedupFitsLongFilesOnARealModel screens files longer than all-MiniLM-L6-v2's 512 tokens
// (the Go distribution's container/ring and its test, BSD licence, in testdata/ring), which the
// server refuses whole: each is embedded in pieces and pooled, the screen completes, and a copy
// of the test with one function renamed is found as its near-duplicate.
func TestDedupFitsLongFilesOnARealModel(t *testing.T) {
	s := shared
	repo := t.TempDir()
	notes := filepath.Join(repo, "notes")
	require.NoError(t, os.MkdirAll(notes, 0o755))
	src := filepath.Join("testdata", "ring")
	ring, err := os.ReadFile(filepath.Join(src, "ring.go"))
	require.NoError(t, err)
	test, err := os.ReadFile(filepath.Join(src, "ring_test.go"))
	require.NoError(t, err)
	renamed := strings.Replace(string(test), "func TestLink1(", "func TestLinkOne(", 1)
	require.NotEqual(t, string(test), renamed, "the copy differs from the test")
	for name, text := range map[string]string{"ring.go.txt": string(ring), "ring_test.go.txt": string(test), "ring_test_copy.go.txt": renamed} {
		require.NoError(t, os.WriteFile(filepath.Join(notes, name), []byte(text), 0o644))
	}
	gittest.Init(t, repo)
	r := s.locumIn(t, repo, t.TempDir(), "dedup", "--dir", "notes", "--glob", "*.txt", "--method", "embedding", "--model", embedModel,
		"--base-url", s.embed.BaseURL(), "--json", "--pairs", "--no-cache")
	require.Equal(t, 0, r.exit, r.stderr)
	var res struct {
		Details struct {
			Fitted int
			Pairs  []struct {
				Score float64
				A, B  string
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res), r.stdout)
	fmt.Fprintf(os.Stderr, "realmodel: dedup of 3 files of %d to %d bytes: %d embedded in pieces; pairs %v\n", len(ring), len(test), res.Details.Fitted, res.Details.Pairs)
	assert.GreaterOrEqual(t, res.Details.Fitted, 2, "the files over 512 tokens were embedded in pieces")
	found := false
	for _, p := range res.Details.Pairs {
		if strings.HasPrefix(p.A, "ring_test") && strings.HasPrefix(p.B, "ring_test") {
			found = true
		}
	}
	assert.True(t, found, "the renamed copy pairs with the test: %v", res.Details.Pairs)
}

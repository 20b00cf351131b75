package dedup

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
)

// A limited set keeps exactly the first pairs of the full, sorted list, whatever order they
// come in and however they are split between sets that are merged, and counts them all.
func TestPairSetKeepsTheHighest(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var all []Pair
	for i := range 500 {
		// Few distinct printed scores, so most ranking falls to the names.
		all = append(all, Pair{Score: float64(rng.IntN(20)) / 20, A: fmt.Sprintf("%03d", rng.IntN(50)), B: fmt.Sprintf("b%03d", i)})
	}
	want := append([]Pair(nil), all...)
	SortPairs(want)
	for _, limit := range []int{0, 1, 7, 100, 499, 500, 800} {
		for _, parts := range []int{1, 3} {
			t.Run(fmt.Sprintf("limit %d in %d parts", limit, parts), func(t *testing.T) {
				sets := make([]pairSet, parts)
				for k, p := range all {
					sets[k%parts].limit = limit
					sets[k%parts].add(p)
				}
				set := &pairSet{limit: limit}
				for k := range sets {
					set.merge(&sets[k])
				}
				got := set.sorted()
				n := len(want)
				if limit > 0 {
					n = min(limit, len(want))
				}
				assert.Equal(t, want[:n], got)
				assert.Equal(t, len(all), set.total)
			})
		}
	}
}

// Each scoring method, given a limited set, keeps what its full list starts with.
func TestScoringKeepsTheTopOfTheFullList(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	vecs := plantedSet(rng, 1500, 32, 300, 0.5)
	n := names(len(vecs))
	texts := make([]string, 300)
	words := randomWords(rng, 400)
	for i := range texts {
		texts[i] = edited(rng, words, 1+i%9)
	}
	sigs := Signatures(texts)
	for _, m := range []struct {
		name  string
		full  func() []Pair
		limit func(*pairSet)
	}{
		{"exact", func() []Pair { return SimilarPairs(Normalize(vecs), n, 0.5) }, func(s *pairSet) { similarPairs(Normalize(vecs), n, 0.5, s) }},
		{"lsh", func() []Pair { return ApproximatePairs(Normalize(vecs), n, 0.5) }, func(s *pairSet) { approximatePairs(Normalize(vecs), n, 0.5, s) }},
		{"lexical", func() []Pair { return LexicalPairs(sigs, n[:len(texts)], 0) }, func(s *pairSet) { lexicalPairs(sigs, n[:len(texts)], 0, s) }},
	} {
		t.Run(m.name, func(t *testing.T) {
			full := m.full()
			require.Greater(t, len(full), 150)
			set := &pairSet{limit: 150}
			m.limit(set)
			assert.Equal(t, len(full), set.total)
			assert.Equal(t, full[:150], set.sorted())
		})
	}
}

// Options.Keep keeps the screen's top pairs and still counts all, and the journal keeps its own
// top pairs even when fewer are shown.
func TestKeepHoldsOnlyTheTopPairs(t *testing.T) {
	dir := t.TempDir()
	for i := range 20 { // 190 pairs
		words := strings.Repeat(fmt.Sprintf("w%d ", i%4), 3) + "the same words in every file"
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d.md", i)), []byte(words), 0o644))
	}
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	c := &packs.Composition{Packs: []*packs.Pack{p}}
	settings, err := c.Resolve("dedup", nil, map[string]string{"method": "lexical", "threshold": "0"})
	require.NoError(t, err)
	var all, top Result
	res := engine.Execute(context.Background(), engine.RunSpec{Mode: "dedup", Settings: settings, JournalPath: filepath.Join(t.TempDir(), "a.jsonl")},
		Steps(Options{Dir: dir}, &all))
	require.Nil(t, res.Error)
	journal := filepath.Join(t.TempDir(), "top.jsonl")
	res = engine.Execute(context.Background(), engine.RunSpec{Mode: "dedup", Settings: settings, JournalPath: journal},
		Steps(Options{Dir: dir, Keep: 5}, &top))
	require.Nil(t, res.Error)
	assert.Equal(t, 190, all.Total)
	assert.Len(t, all.Pairs, 190)
	assert.Equal(t, 190, top.Total)
	assert.Equal(t, all.Pairs[:JournalPairs], top.Pairs, "the journal's top pairs are kept too")
	data, err := os.ReadFile(journal)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"pairs_total":190`)
}

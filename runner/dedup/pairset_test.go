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
	lex := LexicalEntries(texts)
	for _, m := range []struct {
		name  string
		full  func() []Pair
		limit func(*pairSet)
	}{
		{"exact", func() []Pair { return SimilarPairs(Normalize(vecs), n, 0.5) }, func(s *pairSet) { similarPairs(Normalize(vecs), n, 0.5, s) }},
		{"lsh", func() []Pair { return ApproximatePairs(Normalize(vecs), n, 0.5) }, func(s *pairSet) { approximatePairs(Normalize(vecs), n, 0.5, s) }},
		{"lexical", func() []Pair { return LexicalPairs(lex, n[:len(texts)], 0) }, func(s *pairSet) { lexicalPairs(lex, n[:len(texts)], 0, s) }},
		{"lexical banded", func() []Pair { return LexicalPairs(lex, n[:len(texts)], 0.3) }, func(s *pairSet) { lexicalPairs(lex, n[:len(texts)], 0.3, s) }},
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
		Steps(Options{Dir: dir, Pairs: true}, &all))
	require.Nil(t, res.Error)
	journal := filepath.Join(t.TempDir(), "top.jsonl")
	res = engine.Execute(context.Background(), engine.RunSpec{Mode: "dedup", Settings: settings, JournalPath: journal},
		Steps(Options{Dir: dir, Keep: 5, Pairs: true}, &top))
	require.Nil(t, res.Error)
	assert.Equal(t, 190, all.Total)
	assert.Len(t, all.Pairs, 190)
	assert.Equal(t, 190, top.Total)
	assert.Equal(t, all.Pairs[:JournalPairs], top.Pairs, "the journal's top pairs are kept too")
	data, err := os.ReadFile(journal)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"pairs_total":190`)
}

// referenceGroups joins a full list of pairs into groups the plain way: a breadth-first walk
// over the pairs, the weakest pair of each the lowest ranked of its pairs.
func referenceGroups(pairs []Pair, names []string) []Group {
	links := map[string][]string{}
	for _, p := range pairs {
		links[p.A] = append(links[p.A], p.B)
		links[p.B] = append(links[p.B], p.A)
	}
	seen := map[string]int{}
	var out []Group
	for _, n := range names {
		if seen[n] != 0 || links[n] == nil {
			continue
		}
		out = append(out, Group{})
		id := len(out)
		queue := []string{n}
		seen[n] = id
		for len(queue) > 0 {
			x := queue[0]
			queue = queue[1:]
			for _, y := range links[x] {
				if seen[y] == 0 {
					seen[y] = id
					queue = append(queue, y)
				}
			}
		}
	}
	for _, n := range names {
		if id := seen[n]; id != 0 {
			out[id-1].Files = append(out[id-1].Files, n)
		}
	}
	for _, p := range pairs {
		g := &out[seen[p.A]-1]
		if g.Pairs == 0 || ranksBefore(g.Weakest, p) {
			g.Weakest = p
		}
		g.Pairs++
	}
	sortGroups(out)
	return out
}

// Every method joins the pairs it finds into the groups a plain walk over the full list of them
// gives, with the same counts and weakest pairs, on every core.
func TestGroupsMatchTheFullList(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	vecs := plantedSet(rng, 3000, 32, 600, 0.6)
	n := names(len(vecs))
	texts := make([]string, 400)
	for i := range texts {
		texts[i] = strings.Join(randomWords(rng, 60), " ")
		if i%5 != 0 {
			texts[i] = edited(rng, strings.Fields(texts[i-i%5]), 6+i%5)
		}
	}
	lex := LexicalEntries(texts)
	for _, m := range []struct {
		name  string
		names []string
		full  func() []Pair
		into  func(*pairSet)
	}{
		{"exact", n, func() []Pair { return SimilarPairs(Normalize(vecs), n, 0.6) }, func(s *pairSet) { similarPairs(Normalize(vecs), n, 0.6, s) }},
		{"lsh", n, func() []Pair { return ApproximatePairs(Normalize(vecs), n, 0.6) }, func(s *pairSet) { approximatePairs(Normalize(vecs), n, 0.6, s) }},
		{"lexical", n[:len(texts)], func() []Pair { return LexicalPairs(lex, n[:len(texts)], 0.5) }, func(s *pairSet) { lexicalPairs(lex, n[:len(texts)], 0.5, s) }},
	} {
		t.Run(m.name, func(t *testing.T) {
			full := m.full()
			want := referenceGroups(full, m.names)
			require.Greater(t, len(want), 10)
			set := &pairSet{limit: JournalPairs, group: newGrouper(len(m.names))}
			m.into(set)
			assert.Equal(t, len(full), set.total)
			strip := func(g []Group) []Group {
				for k := range g {
					g[k].Weakest.i, g[k].Weakest.j = 0, 0
				}
				return g
			}
			assert.Equal(t, strip(want), strip(set.group.groups(m.names)))
		})
	}
}

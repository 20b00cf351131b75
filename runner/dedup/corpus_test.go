package dedup

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
)

// corpusLabels is testdata/labelled/labels.json: each topic's group of duplicates, and its
// labelled pairs with their kind; every pair of notes from two topics is unrelated.
type corpusLabels struct {
	Groups [][]string `json:"groups"`
	Pairs  []struct {
		A, B      string
		Kind      string
		Duplicate bool
	} `json:"pairs"`
}

const corpusDir = "testdata/labelled"

func readCorpusLabels(t *testing.T) corpusLabels {
	data, err := os.ReadFile(filepath.Join(corpusDir, "labels.json"))
	require.NoError(t, err)
	var labels corpusLabels
	require.NoError(t, json.Unmarshal(data, &labels))
	return labels
}

func pairKey(a, b string) string {
	if a > b {
		a, b = b, a
	}
	return a + " " + b
}

// screenCorpus runs a lexical screen of the labelled corpus with settings over the defaults.
func screenCorpus(t *testing.T, pairs bool, settings map[string]string) (Result, *engine.Result) {
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	s, err := (&packs.Composition{Packs: []*packs.Pack{p}}).Resolve("dedup", nil, settings)
	require.NoError(t, err)
	var found Result
	res := engine.Execute(context.Background(), engine.RunSpec{Mode: "dedup", Settings: s, JournalPath: filepath.Join(t.TempDir(), "j.jsonl")},
		Steps(Options{Dir: corpusDir, Pairs: pairs}, &found))
	require.Nil(t, res.Error)
	return found, res
}

// At the default threshold a lexical screen lists every labelled near-duplicate (a copy, a
// sentence added, words edited, paragraphs reordered, a note pasted inside a longer one) and
// nothing else: no note on the same topic in other words, no two notes of different topics. Its
// groups are the labelled groups, each whole. With -v it logs the scores of each kind.
func TestLexicalDefaultsOnTheLabelledCorpus(t *testing.T) {
	labels := readCorpusLabels(t)
	found, _ := screenCorpus(t, true, map[string]string{"method": "lexical"})
	assert.Equal(t, DefaultJaccard, found.Threshold)
	listed := map[string]Pair{}
	for _, p := range found.Pairs {
		listed[pairKey(p.A, p.B)] = p
	}
	group := map[string]int{}
	for i, g := range labels.Groups {
		for _, m := range g {
			group[m] = i + 1
		}
	}
	for _, p := range labels.Pairs {
		got, ok := listed[pairKey(p.A, p.B)]
		assert.Equal(t, p.Duplicate, ok, "%s (%s): listed %v at %.4f", pairKey(p.A, p.B), p.Kind, ok, got.Score)
		if p.Kind == "pasted inside a longer note" && ok {
			assert.Equal(t, p.A, got.Inside, "%s: the shorter note is inside", p.B)
		}
	}
	for k := range listed {
		ab := strings.Fields(k)
		assert.True(t, group[ab[0]] != 0 && group[ab[0]] == group[ab[1]], "%s: listed, but not two duplicates of one note", k)
	}

	grouped, res := screenCorpus(t, false, map[string]string{"method": "lexical"})
	var got [][]string
	for _, g := range grouped.Groups {
		got = append(got, g.Files)
		assert.GreaterOrEqual(t, g.Weakest.Score, DefaultJaccard)
		assert.Equal(t, g.Files[0][:strings.IndexAny(g.Files[0], "-.")], g.Weakest.A[:strings.IndexAny(g.Weakest.A, "-.")])
	}
	want := append([][]string(nil), labels.Groups...)
	sort.Slice(want, func(i, j int) bool { return want[i][0] < want[j][0] })
	assert.Equal(t, want, got)
	assert.Equal(t, len(found.Pairs), grouped.Total)
	assert.Nil(t, res.Details.(*Details).Pairs, "a screen by groups lists no pairs")

	all, _ := screenCorpus(t, true, map[string]string{"method": "lexical", "threshold": "0"})
	t.Log("\n" + kindTable(labels, all.Pairs))
}

// kindTable gives the lowest and highest score of each kind of pair, unrelated pairs included.
func kindTable(labels corpusLabels, pairs []Pair) string {
	score := map[string]float64{}
	for _, p := range pairs {
		score[pairKey(p.A, p.B)] = p.Score
	}
	topic := func(name string) string { return name[:strings.IndexAny(name, "-.")] }
	kinds := map[string][]float64{}
	labelled := map[string]bool{}
	for _, p := range labels.Pairs {
		kinds[p.Kind] = append(kinds[p.Kind], score[pairKey(p.A, p.B)])
		labelled[pairKey(p.A, p.B)] = true
	}
	for k, v := range score {
		if ab := strings.Fields(k); topic(ab[0]) != topic(ab[1]) {
			kinds["unrelated"] = append(kinds["unrelated"], v)
		}
	}
	var names []string
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, k := range names {
		v := kinds[k]
		sort.Float64s(v)
		fmt.Fprintf(&b, "  %-28s %4d pairs  %.4f to %.4f\n", k, len(v), v[0], v[len(v)-1])
	}
	return b.String()
}

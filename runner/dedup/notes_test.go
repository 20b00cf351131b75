package dedup

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// generatedNotes writes n notes of three to six sentences of words drawn from a Zipf
// vocabulary of 20,000 (a few words common, most rare, as in prose), and plants a near-duplicate
// of an earlier note as every tenth: a copy, a sentence added, words edited, sentences
// reordered, or the note pasted inside a longer one. The seed fixes the set.
func generatedNotes(n int, seed uint64) []string {
	rng := rand.New(rand.NewPCG(seed, seed^0x6e6f746573))
	zipf := rand.NewZipf(rng, 1.07, 2, 19999)
	word := func() string { return fmt.Sprintf("w%d", zipf.Uint64()) }
	sentence := func() string {
		words := make([]string, 8+rng.IntN(13))
		for i := range words {
			words[i] = word()
		}
		return strings.Join(words, " ") + "."
	}
	note := func(sentences int) []string {
		out := make([]string, sentences)
		for i := range out {
			out[i] = sentence()
		}
		return out
	}
	sentences := make([][]string, n)
	out := make([]string, n)
	for i := range out {
		s := note(3 + rng.IntN(4))
		if i%10 == 9 {
			base := sentences[rng.IntN(i)]
			s = slices.Clone(base)
			switch rng.IntN(5) {
			case 1:
				s = slices.Insert(s, rng.IntN(len(s)+1), sentence())
			case 2:
				for k := range s {
					w := strings.Fields(s[k])
					w[rng.IntN(len(w))] = word()
					s[k] = strings.Join(w, " ")
				}
			case 3:
				rng.Shuffle(len(s), func(a, b int) { s[a], s[b] = s[b], s[a] })
			case 4:
				s = append(append(note(2), s...), note(1+rng.IntN(3))...)
			}
		}
		sentences[i] = s
		out[i] = strings.Join(s, " ")
	}
	return out
}

// exactLexicalPairs is the reference lexical screens are held to: every pair whose LexicalScore
// reaches threshold, found with no chance of a miss by prefix filtering. Two sets sharing at
// least k of x's hashes must share one of x's first len(x)-k+1 in any fixed order, so probing an
// index of every hash with each set's prefix, rarest hashes first, finds every pair with a
// Jaccard of t (k = ceil(t*len(x))) or a share of ContainedAt inside the other (a shorter
// prefix), from the smaller set of the two.
func exactLexicalPairs(entries []Lexical, names []string, threshold float64) []Pair {
	freq := map[uint64]int32{}
	for _, e := range entries {
		for _, h := range e.Set {
			freq[h]++
		}
	}
	index := map[uint64][]int32{}
	ordered := make([][]uint64, len(entries))
	for i, e := range entries {
		for _, h := range e.Set {
			index[h] = append(index[h], int32(i))
		}
		o := slices.Clone(e.Set)
		slices.SortFunc(o, func(a, b uint64) int {
			if c := cmp.Compare(freq[a], freq[b]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		ordered[i] = o
	}
	smaller := func(i, j int) bool {
		if li, lj := len(entries[i].Set), len(entries[j].Set); li != lj {
			return li < lj
		}
		return i < j
	}
	stamp := make([]int32, len(entries))
	var out []Pair
	for i, o := range ordered {
		if len(o) == 0 {
			continue
		}
		need := int(math.Ceil(min(threshold, ContainedAt)*float64(len(o)) - 1e-9))
		prefix := len(o) - max(need, 1) + 1
		for _, h := range o[:prefix] {
			for _, y := range index[h] {
				j := int(y)
				if j == i || stamp[j] == int32(i)+1 || !smaller(i, j) {
					continue
				}
				stamp[j] = int32(i) + 1
				a, b := min(i, j), max(i, j)
				if s, _ := LexicalScore(entries[a].Set, entries[b].Set, threshold); atLeast(s, threshold) {
					out = append(out, Pair{Score: round4(s), A: names[a], B: names[b], i: a, j: b})
				}
			}
		}
	}
	SortPairs(out)
	return out
}

// The reference finds what scoring every pair finds.
func TestExactLexicalPairsMatchesEveryPair(t *testing.T) {
	texts := generatedNotes(700, 1)
	entries := LexicalEntries(texts)
	nm := names(len(texts))
	for _, threshold := range []float64{0.5, 0.3, 0.95} {
		var want []Pair
		for i := range entries {
			for j := i + 1; j < len(entries); j++ {
				if s, _ := LexicalScore(entries[i].Set, entries[j].Set, threshold); atLeast(s, threshold) {
					want = append(want, Pair{Score: round4(s), A: nm[i], B: nm[j], i: i, j: j})
				}
			}
		}
		SortPairs(want)
		require.Greater(t, len(want), 30)
		assert.Equal(t, want, exactLexicalPairs(entries, nm, threshold), "threshold %v", threshold)
	}
}

// lexicalRecall is the share of the reference's pairs a screen lists, and the share of its
// pairs that are the reference's with the same score.
func lexicalRecall(got, want []Pair) (recall, precision float64) {
	ref := pairKeys(want)
	hits := 0
	for _, p := range got {
		if s, ok := ref[p.A+" "+p.B]; ok && s == p.Score {
			hits++
		}
	}
	return float64(hits) / float64(max(len(want), 1)), float64(hits) / float64(max(len(got), 1))
}

// TestLexicalRecall holds a lexical screen of 20,000 generated notes (5,000 under -short) at the
// default threshold to the reference: recall and precision at least 0.99.
func TestLexicalRecall(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 5000
	}
	texts := generatedNotes(n, 2)
	entries := LexicalEntries(texts)
	nm := names(n)
	want := exactLexicalPairs(entries, nm, DefaultJaccard)
	got := LexicalPairs(entries, nm, DefaultJaccard)
	require.Greater(t, len(want), n/20)
	recall, precision := lexicalRecall(got, want)
	t.Logf("%d notes: %d pairs, %d listed, recall %.4f, precision %.4f", n, len(want), len(got), recall, precision)
	assert.GreaterOrEqual(t, recall, 0.99)
	assert.GreaterOrEqual(t, precision, 0.99)
}

package dedup

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exactJaccard is the reference the estimates are checked against: the shingle sets compared
// directly.
func exactJaccard(a, b string) float64 {
	set := func(s string) map[uint64]bool {
		out := map[uint64]bool{}
		for _, h := range shingleHashes(s, nil) {
			out[h] = true
		}
		return out
	}
	sa, sb := set(a), set(b)
	inter := 0
	for h := range sa {
		if sb[h] {
			inter++
		}
	}
	union := len(sa) + len(sb) - inter
	if union == 0 {
		return 0
	}
	return float64(inter) / float64(union)
}

func randomWords(rng *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%d", rng.IntN(5000))
	}
	return out
}

// edited replaces every step-th word of words with a new one.
func edited(rng *rand.Rand, words []string, step int) string {
	out := append([]string(nil), words...)
	for i := step / 2; i < len(out); i += step {
		out[i] = fmt.Sprintf("new%d", rng.IntN(1e6))
	}
	return strings.Join(out, " ")
}

func TestShinglesIgnoreCaseAndPunctuation(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		same bool
	}{
		{"case and punctuation", "The quick, brown fox!", "the QUICK brown\n\nfox", true},
		{"word order", "the quick brown fox", "the brown quick fox", false},
		{"non-ASCII letters", "Grüße aus Köln heute", "grüße AUS köln HEUTE", true},
		{"fewer words than a shingle", "alpha beta", "ALPHA, beta.", true},
		{"different short texts", "alpha beta", "alpha gamma", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			same := estimatedJaccard(MinHash(tt.a), MinHash(tt.b)) == 1
			assert.Equal(t, tt.same, same)
		})
	}
}

func TestEmptyTextScoresZero(t *testing.T) {
	assert.Nil(t, MinHash(" \n--- !"))
	assert.Equal(t, 0.0, estimatedJaccard(MinHash(""), MinHash("")))
	assert.Equal(t, 0.0, estimatedJaccard(MinHash(""), MinHash("some words here")))
}

// Files with known overlaps: each near copy of a base text has a known share of its words
// replaced, and some bases are pasted inside a longer text. The MinHash estimate stays within
// 0.12 of the exact Jaccard (under three standard errors of a 128-value signature), and
// LexicalPairs finds exactly the pairs that scoring every pair finds, with the same exact scores.
func TestLexicalPairsOnKnownOverlaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var texts, nm []string
	type planted struct{ i, j int }
	var copies []planted
	for base := 0; base < 20; base++ {
		words := randomWords(rng, 300)
		texts = append(texts, strings.Join(words, " "))
		nm = append(nm, fmt.Sprintf("base-%02d.md", base))
		bi := len(texts) - 1
		for _, step := range []int{50, 12} { // about 2% and 8% of the words edited
			texts = append(texts, edited(rng, words, step))
			nm = append(nm, fmt.Sprintf("base-%02d-edit-%d.md", base, step))
			copies = append(copies, planted{bi, len(texts) - 1})
		}
		if base%4 == 0 { // pasted inside a text 2.5 times its size
			texts = append(texts, strings.Join(randomWords(rng, 200), " ")+" "+texts[bi]+" "+strings.Join(randomWords(rng, 250), " "))
			nm = append(nm, fmt.Sprintf("base-%02d-inside.md", base))
		}
	}
	for k := 0; k < 40; k++ { // unrelated texts
		texts = append(texts, strings.Join(randomWords(rng, 200), " "))
		nm = append(nm, fmt.Sprintf("other-%02d.md", k))
	}
	entries := LexicalEntries(texts)
	for _, c := range copies {
		exact := exactJaccard(texts[c.i], texts[c.j])
		assert.InDelta(t, exact, estimatedJaccard(entries[c.i].Sig, entries[c.j].Sig), 0.12, "%s %s", nm[c.i], nm[c.j])
	}
	for _, threshold := range []float64{0.9, 0.7, 0.5, 0.3} {
		t.Run(fmt.Sprint(threshold), func(t *testing.T) {
			var want []Pair
			for i := range entries {
				for j := i + 1; j < len(entries); j++ {
					if s, _ := LexicalScore(entries[i].Set, entries[j].Set, threshold); atLeast(s, threshold) {
						want = append(want, Pair{Score: round4(s), A: nm[i], B: nm[j]})
					}
				}
			}
			SortPairs(want)
			got := LexicalPairs(entries, nm, threshold)
			require.Equal(t, len(want), len(got))
			for k := range want {
				assert.Equal(t, [3]any{want[k].Score, want[k].A, want[k].B}, [3]any{got[k].Score, got[k].A, got[k].B})
			}
			for _, p := range got {
				assert.Equal(t, p.A[:len("base-00")], p.B[:len("base-00")], "unrelated pair %s %s", p.A, p.B)
			}
		})
	}
	// The lightly edited copies (Jaccard about 0.9) are all found at 0.7, and a base pasted
	// inside a longer text is found by its share, naming it as the one inside.
	found := map[string]Pair{}
	for _, p := range LexicalPairs(entries, nm, 0.7) {
		found[p.A+" "+p.B] = p
	}
	for base := 0; base < 20; base++ {
		assert.Contains(t, found, fmt.Sprintf("base-%02d.md base-%02d-edit-50.md", base, base), "base %d", base)
		if base%4 == 0 {
			p, ok := found[fmt.Sprintf("base-%02d.md base-%02d-inside.md", base, base)]
			if assert.True(t, ok, "base %d inside", base) {
				assert.Equal(t, fmt.Sprintf("base-%02d.md", base), p.Inside)
				assert.Equal(t, 1.0, p.Score)
			}
		}
	}
}

func TestLexicalScore(t *testing.T) {
	seq := func(from, to uint64) []uint64 {
		var out []uint64
		for h := from; h < to; h++ {
			out = append(out, h)
		}
		return out
	}
	tests := []struct {
		name      string
		a, b      []uint64
		threshold float64
		score     float64
		inside    int
	}{
		{"same", seq(0, 20), seq(0, 20), 0.5, 1, 0},
		{"half shared", seq(0, 30), seq(10, 40), 0.5, 0.5, 0},
		{"disjoint", seq(0, 20), seq(20, 40), 0.5, 0, 0},
		{"empty", nil, seq(0, 20), 0, 0, 0},
		{"a inside a larger b", seq(0, 20), seq(0, 60), 0.5, 1, 1},
		{"b inside a larger a", seq(0, 60), seq(5, 25), 0.5, 1, 2},
		{"inside, but Jaccard already passes", seq(0, 20), seq(0, 30), 0.5, 20.0 / 30, 0},
		{"too few shingles to be inside", seq(0, 15), seq(0, 60), 0.5, 0.25, 0},
		{"mostly inside, under ContainedAt", seq(0, 20), seq(3, 60), 0.5, 17.0 / 60, 0},
		{"inside at a share below a higher threshold", seq(0, 20), append(seq(1, 20), seq(100, 140)...), 0.97, 19.0 / 60, 0},
		{"inside at a share at a higher threshold", seq(0, 20), seq(0, 60), 0.97, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			score, inside := LexicalScore(tt.a, tt.b, tt.threshold)
			assert.InDelta(t, tt.score, score, 1e-12)
			assert.Equal(t, tt.inside, inside)
		})
	}
}

func TestBandRowsKeepRecallAtTheThreshold(t *testing.T) {
	tests := []struct {
		threshold float64
		rows      int
	}{{0.99, 16}, {0.95, 8}, {0.8, 4}, {0.5, 2}, {1.0 / 3, 2}, {0.2, 1}, {0.01, 0}}
	for _, tt := range tests {
		assert.Equal(t, tt.rows, bandRows(tt.threshold), "threshold %v", tt.threshold)
	}
}

func BenchmarkSignatures(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	texts := make([]string, 1000)
	for i := range texts {
		texts[i] = strings.Join(randomWords(rng, 300), " ")
	}
	b.ResetTimer()
	for range b.N {
		LexicalEntries(texts)
	}
}

// FuzzMinHash feeds arbitrary file text to the shingler: it never panics, a text scores 1 with
// itself unless it has no words, and letter case never changes a signature.
func FuzzMinHash(f *testing.F) {
	f.Add("The quick, brown fox!")
	f.Add("Grüße aus Köln \xff\xfe")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		sig := MinHash(text)
		if sig == nil {
			return
		}
		if estimatedJaccard(sig, sig) != 1 {
			t.Fatal("a text does not match itself")
		}
		if strings.ToValidUTF8(text, "") == text && estimatedJaccard(sig, MinHash(strings.ToUpper(text))) != 1 && strings.EqualFold(strings.ToUpper(text), text) {
			t.Fatalf("upper case changed the signature of %q", text)
		}
	})
}

// estimatedJaccard is the share of signature positions two entries agree on, the MinHash estimate
// of their Jaccard similarity.
func estimatedJaccard(a, b Signature) float64 {
	if a == nil || b == nil {
		return 0
	}
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
	}
	return float64(same) / SignatureSize
}

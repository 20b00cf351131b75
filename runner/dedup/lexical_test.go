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
			same := EstimatedJaccard(MinHash(tt.a), MinHash(tt.b)) == 1
			assert.Equal(t, tt.same, same)
		})
	}
}

func TestEmptyTextScoresZero(t *testing.T) {
	assert.Nil(t, MinHash(" \n--- !"))
	assert.Equal(t, 0.0, EstimatedJaccard(MinHash(""), MinHash("")))
	assert.Equal(t, 0.0, EstimatedJaccard(MinHash(""), MinHash("some words here")))
}

// Files with known overlaps: each near copy of a base text has a known share of its words
// replaced, so its exact Jaccard is known; the estimate stays within 0.12 of it (under three
// standard errors of a 128-value signature), and LexicalPairs finds exactly the pairs whose
// estimates reach the threshold.
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
	}
	for k := 0; k < 40; k++ { // unrelated texts
		texts = append(texts, strings.Join(randomWords(rng, 200), " "))
		nm = append(nm, fmt.Sprintf("other-%02d.md", k))
	}
	sigs := Signatures(texts)
	for _, c := range copies {
		exact := exactJaccard(texts[c.i], texts[c.j])
		assert.InDelta(t, exact, EstimatedJaccard(sigs[c.i], sigs[c.j]), 0.12, "%s %s", nm[c.i], nm[c.j])
	}
	for _, threshold := range []float64{0.9, 0.7, 0.5, 0.3} {
		t.Run(fmt.Sprint(threshold), func(t *testing.T) {
			var want []Pair
			for i := range sigs {
				for j := i + 1; j < len(sigs); j++ {
					if s := EstimatedJaccard(sigs[i], sigs[j]); atLeast(s, threshold) {
						want = append(want, Pair{Score: s, A: nm[i], B: nm[j]})
					}
				}
			}
			SortPairs(want)
			got := LexicalPairs(sigs, nm, threshold)
			require.Equal(t, len(want), len(got))
			for k := range want {
				assert.Equal(t, [3]any{want[k].Score, want[k].A, want[k].B}, [3]any{got[k].Score, got[k].A, got[k].B})
			}
			for _, p := range got {
				assert.Equal(t, p.A[:len("base-00")], p.B[:len("base-00")], "unrelated pair %s %s", p.A, p.B)
			}
		})
	}
	// The lightly edited copies (exact Jaccard about 0.9) are all found at 0.7.
	found := map[string]bool{}
	for _, p := range LexicalPairs(sigs, nm, 0.7) {
		found[p.A+" "+p.B] = true
	}
	for base := 0; base < 20; base++ {
		assert.True(t, found[fmt.Sprintf("base-%02d.md base-%02d-edit-50.md", base, base)], "base %d", base)
	}
}

func TestBandRowsKeepRecallAtTheThreshold(t *testing.T) {
	tests := []struct {
		threshold float64
		rows      int
	}{{0.99, 16}, {0.95, 8}, {0.8, 4}, {0.5, 2}, {0.2, 1}, {0.01, 0}}
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
		Signatures(texts)
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
		if EstimatedJaccard(sig, sig) != 1 {
			t.Fatal("a text does not match itself")
		}
		if strings.ToValidUTF8(text, "") == text && EstimatedJaccard(sig, MinHash(strings.ToUpper(text))) != 1 && strings.EqualFold(strings.ToUpper(text), text) {
			t.Fatalf("upper case changed the signature of %q", text)
		}
	})
}

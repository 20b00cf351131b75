package dedup

import (
	"math/rand/v2"
	"slices"

	"github.com/viterin/vek/vek32"
)

// Separation is how a sample of all pairs of a screen by embeddings scored: where most pairs of a
// folder score at or above the threshold, or nearly all score alike, the model's vectors do not
// tell the files apart, and the pairs it lists say little.
type Separation struct {
	// Sampled is how many pairs were scored: all of them up to SeparationSample, else that many
	// drawn at random (from a fixed seed, so a run is repeatable).
	Sampled int `json:"sampled"`
	// AtOrAbove is the share of sampled pairs at or above the threshold.
	AtOrAbove float64 `json:"at_or_above"`
	// Low, Median and High are the 5th, 50th and 95th percentiles of the sampled scores.
	Low    float64 `json:"p05"`
	Median float64 `json:"p50"`
	High   float64 `json:"p95"`
	// Separates is false when AtOrAbove is at least MostPairs or High-Low is under MinSpread.
	Separates bool `json:"separates"`
}

const (
	// SeparationSample is how many pairs the separation check scores at most.
	SeparationSample = 4096
	// MostPairs is the share of pairs at or above the threshold past which a screen says its
	// vectors may not separate the files: in a folder of notes, most pairs are not duplicates.
	MostPairs = 0.5
	// MinSpread is the least distance from the 5th to the 95th percentile of the scores of
	// vectors that tell files apart; a real embedding model on unrelated notes spreads wider than
	// 0.2.
	MinSpread = 0.05
	// minSeparationFiles is the fewest files the check judges: fewer give too few pairs to say.
	minSeparationFiles = 6
)

// Separation scores a sample of u's pairs against threshold; nil for fewer than
// minSeparationFiles rows.
func (u *Unit) Separation(threshold float64) *Separation {
	if u == nil || u.rows < minSeparationFiles || u.dim == 0 {
		return nil
	}
	all := u.rows * (u.rows - 1) / 2
	var scores []float64
	if all <= SeparationSample {
		for i := range u.rows {
			for j := i + 1; j < u.rows; j++ {
				scores = append(scores, float64(vek32.Dot(u.row(i), u.row(j))))
			}
		}
	} else {
		rng := rand.New(rand.NewPCG(0x736570, 0x617261))
		for len(scores) < SeparationSample {
			i, j := rng.IntN(u.rows), rng.IntN(u.rows)
			if i != j {
				scores = append(scores, float64(vek32.Dot(u.row(i), u.row(j))))
			}
		}
	}
	slices.Sort(scores)
	above := 0
	for _, s := range scores {
		if atLeast(s, threshold) {
			above++
		}
	}
	at := func(q float64) float64 { return round4(scores[int(q*float64(len(scores)-1))]) }
	s := &Separation{Sampled: len(scores), AtOrAbove: round4(float64(above) / float64(len(scores))), Low: at(0.05), Median: at(0.5), High: at(0.95)}
	s.Separates = s.AtOrAbove < MostPairs && s.High-s.Low >= MinSpread
	return s
}

package dedup

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/internal/runtest"
)

// Vectors that tell files apart separate; vectors that all point one way (every pair above
// 0.9, as a small model's were on real notes) do not, nor do ones whose pairs mostly pass the
// threshold; a handful of files is too few to judge.
func TestSeparation(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	alike := func(n int, cos float64) [][]float64 {
		base := runtest.RandomUnit(rng, 1, 64)[0]
		out := make([][]float64, n)
		for i := range out {
			out[i] = nearby(rng, base, cos)
		}
		return out
	}
	tests := []struct {
		name      string
		vecs      [][]float64
		threshold float64
		separates bool
		sampled   int
	}{
		{"random, all pairs", runtest.RandomUnit(rng, 60, 64), 0.8, true, 60 * 59 / 2},
		{"random, a sample", runtest.RandomUnit(rng, 400, 64), 0.8, true, SeparationSample},
		{"all alike", alike(50, 0.95), 0.8, false, 50 * 49 / 2},
		{"most pairs above a low threshold", runtest.RandomUnit(rng, 50, 64), -0.1, false, 50 * 49 / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Normalize(tt.vecs).Separation(tt.threshold)
			require.NotNil(t, s)
			assert.Equal(t, tt.separates, s.Separates, "%+v", s)
			assert.Equal(t, tt.sampled, s.Sampled)
			assert.LessOrEqual(t, s.Low, s.Median)
			assert.LessOrEqual(t, s.Median, s.High)
		})
	}
	assert.Nil(t, Normalize(runtest.RandomUnit(rng, minSeparationFiles-1, 8)).Separation(0.8))
	r := &Result{Threshold: 0.8, Separation: Normalize(alike(50, 0.95)).Separation(0.8)}
	assert.Contains(t, r.Warning(), "of 1225 sampled pairs score at or above 0.8")
	assert.Empty(t, (&Result{Threshold: 0.8}).Warning())
}

package runner

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func randomUnit(rng *rand.Rand, n, dim int) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		v := make([]float64, dim)
		var norm float64
		for k := range v {
			v[k] = rng.NormFloat64()
			norm += v[k] * v[k]
		}
		for k := range v {
			v[k] /= math.Sqrt(norm)
		}
		out[i] = v
	}
	return out
}

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%05d.md", i)
	}
	return out
}

func TestSimilarPairsMatchesTheNestedLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vecs := randomUnit(rng, 1100, 16) // more than two blocks
	// Plant near-duplicates across block boundaries.
	vecs[1050] = append([]float64(nil), vecs[3]...)
	vecs[1050][0] += 0.01
	vecs[700] = append([]float64(nil), vecs[600]...)
	want := NestedLoopPairs(vecs, names(len(vecs)), 0.7)
	got := SimilarPairs(Normalize(vecs), names(len(vecs)), 0.7)
	require.Equal(t, len(want), len(got))
	for i := range want {
		assert.Equal(t, want[i].A, got[i].A)
		assert.Equal(t, want[i].B, got[i].B)
		assert.InDelta(t, want[i].Score, got[i].Score, 1e-5)
	}
	// Both planted pairs print as 1.000, so file-name order decides.
	assert.Equal(t, []string{"00003.md", "00600.md"}, []string{got[0].A, got[1].A})
}

func TestZeroVectorScoresZero(t *testing.T) {
	vecs := [][]float64{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}
	got := SimilarPairs(Normalize(vecs), []string{"a", "b", "c"}, -1)
	require.Len(t, got, 3)
	for _, p := range got {
		assert.False(t, math.IsNaN(p.Score))
		assert.Equal(t, 0.0, p.Score)
	}
	// Ties in score come out in file-name order.
	assert.Equal(t, []string{"a", "a", "b"}, []string{got[0].A, got[1].A, got[2].A})
	assert.Equal(t, []string{"b", "c", "c"}, []string{got[0].B, got[1].B, got[2].B})
}

func TestThresholdIsInclusive(t *testing.T) {
	vecs := [][]float64{{1, 0}, {1, 1}}
	s := 1 / math.Sqrt2
	got := SimilarPairs(Normalize(vecs), []string{"a", "b"}, s)
	require.Len(t, got, 1)
	assert.InDelta(t, s, got[0].Score, 1e-6)
}

func benchScoring(b *testing.B, n int, score func([][]float64, []string) []Pair) {
	vecs := randomUnit(rand.New(rand.NewPCG(7, 8)), n, 768)
	nm := names(n)
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	peak := uint64(0)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		// Sampled every 5ms: ReadMemStats stops the world, so sampling any faster would slow
		// what it measures.
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	b.ResetTimer()
	for range b.N {
		score(vecs, nm)
	}
	b.StopTimer()
	close(stop)
	<-done
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// BenchmarkScore measures scoring alone, on random unit vectors of dimension 768, with locum's
// block products and with the plain nested loop. The heap peak includes the input vectors
// (about 6 MiB per 1,000 files).
func BenchmarkScore(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("gonum/files=%d", n), func(b *testing.B) {
			benchScoring(b, n, func(v [][]float64, nm []string) []Pair { return SimilarPairs(Normalize(v), nm, 0.8) })
		})
		b.Run(fmt.Sprintf("nested-loop/files=%d", n), func(b *testing.B) {
			benchScoring(b, n, func(v [][]float64, nm []string) []Pair { return NestedLoopPairs(v, nm, 0.8) })
		})
	}
}

package dedup

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/viterin/vek/vek32"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/locumdev/locum/runner/internal/runtest"
)

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%05d.md", i)
	}
	return out
}

func TestSimilarPairsMatchesTheNestedLoop(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	vecs := runtest.RandomUnit(rng, 1100, 16) // more than two blocks
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
		// Float32 rounding may put a score on the other side of a printed decimal.
		assert.InDelta(t, want[i].Score, got[i].Score, 1.01e-4)
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
	assert.InDelta(t, s, got[0].Score, 5e-5, "to four decimals")
}

func benchScoring(b *testing.B, n int, score func([][]float64, []string) []Pair) {
	vecs := runtest.RandomUnit(rand.New(rand.NewPCG(7, 8)), n, 768)
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

// gonumPairs is the kernel locum had before the vek one, kept as a measured candidate: gonum's
// Sgemm over 1024-row blocks, Ssyrk on the diagonal ones, on one core.
func gonumPairs(u *Unit, names []string, threshold float64) []Pair {
	const block = 1024
	n := u.rows
	var out []Pair
	scratch := make([]float32, block*block)
	data := make([]float32, 0, n*u.dim)
	for _, row := range u.vecs {
		data = append(data, row...)
	}
	rowsOf := func(from, to int) blas32.General {
		return blas32.General{Rows: to - from, Cols: u.dim, Stride: u.dim, Data: data[from*u.dim : to*u.dim]}
	}
	for bi := 0; bi < n; bi += block {
		ei := min(bi+block, n)
		a := rowsOf(bi, ei)
		for bj := bi; bj < n; bj += block {
			ej := min(bj+block, n)
			rows, cols := ei-bi, ej-bj
			c := blas32.General{Rows: rows, Cols: cols, Stride: cols, Data: scratch[:rows*cols]}
			if bi == bj {
				blas32.Syrk(blas.NoTrans, 1, a, 0, blas32.Symmetric{N: rows, Stride: cols, Data: c.Data, Uplo: blas.Upper})
			} else {
				blas32.Gemm(blas.NoTrans, blas.Trans, 1, a, rowsOf(bj, ej), 0, c)
			}
			for r := 0; r < rows; r++ {
				c0 := 0
				if bi == bj {
					c0 = r + 1
				}
				for col := c0; col < cols; col++ {
					if s := float64(c.Data[r*cols+col]); atLeast(s, threshold) {
						out = append(out, Pair{Score: s, A: names[bi+r], B: names[bj+col]})
					}
				}
			}
		}
	}
	SortPairs(out)
	return out
}

func TestGonumCandidateAgrees(t *testing.T) {
	vecs := runtest.RandomUnit(rand.New(rand.NewPCG(1, 2)), 1100, 16)
	vecs[1050] = append([]float64(nil), vecs[3]...)
	want := SimilarPairs(Normalize(vecs), names(len(vecs)), 0.6)
	got := gonumPairs(Normalize(vecs), names(len(vecs)), 0.6)
	require.Equal(t, len(want), len(got))
	for i := range want {
		assert.Equal(t, [2]string{want[i].A, want[i].B}, [2]string{got[i].A, got[i].B})
	}
}

// pairFlops is the arithmetic of scoring n rows of dimension dim: a multiply and an add per
// element of every pair's dot product. Every kernel is credited with this useful work only.
func pairFlops(n, dim int) float64 { return float64(n) * float64(n-1) / 2 * float64(dim) * 2 }

// BenchmarkScore measures scoring alone, on random unit vectors of dimension 768: locum's kernel,
// the same tiles with vek's dot product alone, gonum's (the kernel locum had) and the plain nested
// loop. The heap peak includes the input vectors (about 6 MiB per 1,000 files).
//
// It scores 1,000 files; LOCUM_BENCH_SCORE_FILES adds a size, such as docs/performance.md's 10000, where
// the nested loop alone takes about a minute on a quiet 2-core machine and three on a busy one.
func BenchmarkScore(b *testing.B) {
	sizes := []int{1000}
	if v := os.Getenv("LOCUM_BENCH_SCORE_FILES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			b.Fatalf("LOCUM_BENCH_SCORE_FILES=%q: want a number of files, 2 or more", v)
		}
		if n != 1000 {
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		kernels := []struct {
			name  string
			score func(v [][]float64, nm []string) []Pair
		}{
			{"locum", func(v [][]float64, nm []string) []Pair { return SimilarPairs(Normalize(v), nm, 0.8) }},
			{"vek-dot", func(v [][]float64, nm []string) []Pair {
				// The tiles with vek's one dot product per pair, without the 2x4 kernel.
				saved := hasDot2x4
				hasDot2x4 = false
				defer func() { hasDot2x4 = saved }()
				return SimilarPairs(Normalize(v), nm, 0.8)
			}},
			{"gonum", func(v [][]float64, nm []string) []Pair { return gonumPairs(Normalize(v), nm, 0.8) }},
			{"nested-loop", func(v [][]float64, nm []string) []Pair { return NestedLoopPairs(v, nm, 0.8) }},
		}
		for _, k := range kernels {
			b.Run(fmt.Sprintf("%s/files=%d", k.name, n), func(b *testing.B) {
				benchScoring(b, n, k.score)
				b.ReportMetric(pairFlops(n, 768)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkScoreVsOpenBLAS times locum's kernel and OpenBLAS on the same 10,000 x 768 matrix in
// one run, and reports both rates and their ratio. OpenBLAS runs through testdata/sgemm.c, built
// with the C compiler against Debian's libopenblas-dev; where either is absent the comparison is
// skipped, saying so.
func BenchmarkScoreVsOpenBLAS(b *testing.B) {
	const n, dim = 10000, 768
	dir := b.TempDir()
	bin := filepath.Join(dir, "sgemm")
	if out, err := exec.Command("cc", "-O2", "-o", bin, "testdata/sgemm.c", "-lopenblas").CombinedOutput(); err != nil {
		b.Skipf("skipping the OpenBLAS comparison: building testdata/sgemm.c against libopenblas failed (apt-get install gcc libopenblas-dev): %v\n%s", err, out)
	}
	u := Normalize(runtest.RandomUnit(rand.New(rand.NewPCG(7, 8)), n, dim))
	raw := make([]byte, 0, 4*n*dim)
	for _, row := range u.vecs {
		for _, x := range row {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(x))
		}
	}
	file := filepath.Join(dir, "m.f32")
	require.NoError(b, os.WriteFile(file, raw, 0o600))
	nm := names(n)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		SimilarPairs(u, nm, 0.8)
	}
	ours := time.Since(start).Seconds() / float64(b.N)
	b.StopTimer()
	openblas := func(env ...string) float64 {
		cmd := exec.Command(bin, file, fmt.Sprint(n), fmt.Sprint(dim), "1024", fmt.Sprint(b.N))
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		require.NoError(b, err)
		secs, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
		require.NoError(b, err)
		return secs
	}
	// OpenBLAS picks its kernels by CPU model, and Debian's build takes a CPU it does not know
	// (this machine's, under KVM) for a Prescott, with SSE3 kernels only. It runs a second time
	// told to use its Haswell (AVX2 and FMA) kernels, the instructions locum's kernel uses; the
	// ratio is to the faster of the two.
	detected := openblas()
	haswell := openblas("OPENBLAS_CORETYPE=Haswell")
	flops := pairFlops(n, dim)
	b.ReportMetric(flops/ours/1e9, "locum-GFLOP/s")
	b.ReportMetric(flops/detected/1e9, "openblas-GFLOP/s")
	b.ReportMetric(flops/haswell/1e9, "openblas-haswell-GFLOP/s")
	b.ReportMetric(min(detected, haswell)/ours, "ratio-to-openblas")
}

func TestDot2x4MatchesDot(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for _, dim := range []int{8, 16, 768, 1032} {
		rows := make([][]float32, 6)
		for r := range rows {
			rows[r] = make([]float32, dim)
			for k := range rows[r] {
				rows[r][k] = float32(rng.NormFloat64())
			}
		}
		var got [8]float32
		dot2x4(rows[0], rows[1], rows[2], rows[3], rows[4], rows[5], &got)
		for k := range 4 {
			assert.InDelta(t, vek32.Dot(rows[0], rows[2+k]), got[k], 1e-3, "dim %d a0.b%d", dim, k)
			assert.InDelta(t, vek32.Dot(rows[1], rows[2+k]), got[4+k], 1e-3, "dim %d a1.b%d", dim, k)
		}
	}
}

// Every dimension and row count takes another path through the tile (the 2x4 kernel, its row and
// column tails, the plain dot product): all agree with the nested loop.
func TestSimilarPairsOddShapes(t *testing.T) {
	for _, shape := range [][2]int{{7, 8}, {9, 12}, {263, 16}, {515, 24}, {300, 3}} {
		n, dim := shape[0], shape[1]
		vecs := runtest.RandomUnit(rand.New(rand.NewPCG(uint64(n), uint64(dim))), n, dim)
		want := NestedLoopPairs(vecs, names(n), 0.3)
		got := SimilarPairs(Normalize(vecs), names(n), 0.3)
		// Scores within float32 rounding may print in another order; the sets must agree.
		w, g := pairKeys(want), pairKeys(got)
		require.Equal(t, len(w), len(g), "n=%d dim=%d", n, dim)
		for k, s := range w {
			gs, ok := g[k]
			require.True(t, ok, "n=%d dim=%d: %s missing", n, dim, k)
			require.InDelta(t, s, gs, 1.01e-4)
		}
	}
}

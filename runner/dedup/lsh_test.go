package dedup

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

// plantedSet is n random unit vectors with pairs planted at cosines spread evenly from just
// below the threshold to 1, so the exact answer has many pairs near the threshold, where LSH
// misses most.
func plantedSet(rng *rand.Rand, n, dim, planted int, threshold float64) [][]float64 {
	vecs := runtest.RandomUnit(rng, n, dim)
	for k := 0; k < planted; k++ {
		i, j := rng.IntN(n), rng.IntN(n)
		if i == j {
			continue
		}
		vecs[j] = nearby(rng, vecs[i], threshold-0.02+(1-threshold+0.02)*rng.Float64())
	}
	return vecs
}

// nearby is a unit vector at cosine cos from the unit vector v: cos*v + sin*w, w a random unit
// vector orthogonal to v.
func nearby(rng *rand.Rand, v []float64, cos float64) []float64 {
	dim := len(v)
	w := runtest.RandomUnit(rng, 1, dim)[0]
	var dot float64
	for d := range w {
		dot += w[d] * v[d]
	}
	var norm float64
	for d := range w {
		w[d] -= dot * v[d]
		norm += w[d] * w[d]
	}
	sin := math.Sqrt(1 - cos*cos)
	out := make([]float64, dim)
	for d := range out {
		out[d] = cos*v[d] + sin*w[d]/math.Sqrt(norm)
	}
	return out
}

func pairKeys(p []Pair) map[string]float64 {
	out := map[string]float64{}
	for _, x := range p {
		out[x.A+" "+x.B] = x.Score
	}
	return out
}

// TestApproximateRecall measures recall against exact scoring on 5,000 vectors of 64 dimensions
// (1,000 under -short), and fails below 0.99. Every pair it lists is a true pair with its exact
// score. LOCUM_RECALL_FILES and LOCUM_RECALL_DIM measure other sizes: 20000 and 64 is the size
// docs/performance.md's recall figure quotes, 100000 and 768 a large screen's.
func TestApproximateRecall(t *testing.T) {
	n, dim := 5000, 64
	if testing.Short() {
		n = 1000
	}
	for _, v := range []struct {
		env string
		to  *int
	}{{"LOCUM_RECALL_FILES", &n}, {"LOCUM_RECALL_DIM", &dim}} {
		if s := os.Getenv(v.env); s != "" {
			x, err := strconv.Atoi(s)
			require.NoError(t, err, v.env)
			*v.to = x
		}
	}
	for _, threshold := range []float64{0.8, 0.9} {
		t.Run(fmt.Sprint(threshold), func(t *testing.T) {
			u := Normalize(plantedSet(rand.New(rand.NewPCG(11, uint64(threshold*100))), n, dim, n/7, threshold))
			nm := names(n)
			_, ok := planLSH(n, threshold)
			require.True(t, ok, "LSH must be less work than exact scoring here")
			exact := pairKeys(SimilarPairs(u, nm, threshold))
			approx := pairKeys(ApproximatePairs(u, nm, threshold))
			require.Greater(t, len(exact), n/10)
			hits := 0
			for k, s := range approx {
				want, ok := exact[k]
				require.True(t, ok, "a pair exact scoring does not list: %s", k)
				assert.InDelta(t, want, s, 1e-6)
				hits++
			}
			recall := float64(hits) / float64(len(exact))
			t.Logf("threshold %v: %d exact pairs, recall %.4f", threshold, len(exact), recall)
			assert.GreaterOrEqual(t, recall, 0.99)
		})
	}
}

func TestPlanLSH(t *testing.T) {
	_, ok := planLSH(100, 0.8)
	assert.False(t, ok, "100 vectors: exact is less work")
	_, ok = planLSH(100000, 0)
	assert.False(t, ok, "a threshold of 0 or below lists most pairs")
	plan, ok := planLSH(100000, 0.8)
	require.True(t, ok)
	p := 1 - math.Acos(0.8)/math.Pi
	miss := math.Pow(1-math.Pow(p, float64(plan.bits)), float64(plan.tables))
	assert.LessOrEqual(t, miss, LSHMissAtThreshold)
}

// BenchmarkApproximate compares LSH candidates with exact scoring on 20,000 vectors of 768.
func BenchmarkApproximate(b *testing.B) {
	const n, dim = 20000, 768
	u := Normalize(plantedSet(rand.New(rand.NewPCG(12, 13)), n, dim, 2000, 0.8))
	nm := names(n)
	b.Run("lsh", func(b *testing.B) {
		for range b.N {
			ApproximatePairs(u, nm, 0.8)
		}
	})
	b.Run("exact", func(b *testing.B) {
		for range b.N {
			SimilarPairs(u, nm, 0.8)
		}
	})
}

// A dedup run with --exact=false on a set where LSH is less work says so in its result, and finds
// the same pairs as --exact=true on planted duplicates.
func TestDedupSaysWhichScoringRan(t *testing.T) {
	const n = 3000
	root := t.TempDir()
	dir := filepath.Join(root, "notes")
	require.NoError(t, os.Mkdir(dir, 0o755))
	rng := rand.New(rand.NewPCG(21, 22))
	vecs := plantedSet(rng, n, 16, 200, 0.9)
	data := make([]map[string]any, n)
	for i := range n {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%04d.md", i)), []byte(fmt.Sprint(i)), 0o644))
		data[i] = map[string]any{"index": i, "embedding": vecs[i]}
	}
	reply, err := json.Marshal(map[string]any{"data": data})
	require.NoError(t, err)
	s := scripted.New()
	defer s.Close()
	s.On("POST", "/v1/embeddings", scripted.Reply{JSON: reply})
	run := func(exact string) Result {
		p, err := packs.LoadBuiltin(packs.DefaultPack)
		require.NoError(t, err)
		c := &packs.Composition{Packs: []*packs.Pack{p}}
		settings, err := c.Resolve("dedup", nil, map[string]string{"base-url": s.BaseURL(), "model": "m",
			"exact": exact, "batch-size": fmt.Sprint(n), "threshold": "0.9"})
		require.NoError(t, err)
		var found Result
		spec := engine.RunSpec{Mode: "dedup", Root: root, Settings: settings, Model: "m", JournalPath: filepath.Join(t.TempDir(), "j")}
		res := engine.Execute(context.Background(), spec, Steps(Options{Dir: dir, Root: root, NoCache: true}, &found))
		require.Nil(t, res.Error)
		assert.Equal(t, found.Method, res.Details.(*Details).Method)
		return found
	}
	lsh, exact := run("false"), run("true")
	assert.Equal(t, "lsh", lsh.Method)
	assert.Equal(t, "exact", exact.Method)
	require.NotEmpty(t, exact.Pairs)
	assert.GreaterOrEqual(t, float64(len(lsh.Pairs)), 0.99*float64(len(exact.Pairs)))
	all := pairKeys(exact.Pairs)
	for k := range pairKeys(lsh.Pairs) {
		_, ok := all[k]
		assert.True(t, ok, k)
	}
}

// The hash codes are the same whether the 2x4 kernel or the plain dot product computes them, for
// an even and an odd number of rows.
func TestHashCodesAgreeAcrossKernels(t *testing.T) {
	for _, n := range []int{64, 65} {
		u := Normalize(runtest.RandomUnit(rand.New(rand.NewPCG(51, uint64(n))), n, 32))
		plan := lshPlan{bits: 7, tables: 5} // 35 planes: the kernel's four and a tail
		fast := u.hashCodes(plan)
		saved := hasDot2x4
		hasDot2x4 = false
		slow := u.hashCodes(plan)
		hasDot2x4 = saved
		assert.Equal(t, slow, fast, "n=%d", n)
	}
}

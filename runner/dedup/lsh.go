package dedup

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/viterin/vek/vek32"
)

// Approximate scoring: random-hyperplane LSH picks candidate pairs, and each candidate is scored
// exactly, so a listed score is the true cosine; what approximation costs is a pair missed. Two
// unit vectors at cosine s fall on one side of a random hyperplane with probability
// p = 1 - arccos(s)/pi; a table hashes each vector to k such bits, and a pair is a candidate when
// any of L tables gives both the same k bits: probability 1 - (1 - p^k)^L.

// LSHMissAtThreshold is the chance that a pair exactly at the threshold is not a candidate; pairs
// above it are missed less often.
const LSHMissAtThreshold = 0.001

// lshPlan is k bits per table and L tables.
type lshPlan struct{ bits, tables int }

// planLSH picks the plan with the least work for n vectors at threshold: hashing costs k*L dot
// products per vector, and candidates one dot product each, counted for pairs of random vectors
// (p = 1/2), the bulk of any set. It reports false when exact scoring is no more work.
func planLSH(n int, threshold float64) (lshPlan, bool) {
	if threshold <= 0 || n < 2 {
		return lshPlan{}, false
	}
	p := 1 - math.Acos(min(threshold, 1))/math.Pi
	pairs := float64(n) * float64(n-1) / 2
	best, bestCost := lshPlan{}, pairs
	for k := 2; k <= 24; k++ {
		hit := math.Pow(p, float64(k))
		tables := int(math.Ceil(math.Log(LSHMissAtThreshold) / math.Log1p(-hit)))
		if tables < 1 || tables > 4096 {
			continue
		}
		chance := 1 - math.Pow(1-math.Pow(0.5, float64(k)), float64(tables))
		if cost := float64(n)*float64(k*tables) + pairs*chance; cost < bestCost {
			best, bestCost = lshPlan{bits: k, tables: tables}, cost
		}
	}
	return best, best.tables > 0
}

// ApproximatePairs lists the pairs at or above threshold that random-hyperplane LSH makes
// candidates, each scored exactly; it falls back to SimilarPairs where that is no more work.
// The hyperplanes come from a fixed seed, so a run is repeatable.
func ApproximatePairs(u *Unit, names []string, threshold float64) []Pair {
	set := &pairSet{}
	approximatePairs(u, names, threshold, set)
	return set.sorted()
}

// approximatePairs adds the pairs ApproximatePairs finds to set, each table's into a set of the
// same limit first.
func approximatePairs(u *Unit, names []string, threshold float64, set *pairSet) {
	if u == nil || u.dim == 0 {
		return
	}
	plan, ok := planLSH(u.rows, threshold)
	if !ok {
		similarPairs(u, names, threshold, set)
		return
	}
	codes := u.hashCodes(plan)
	found := make([]pairSet, plan.tables)
	var wg sync.WaitGroup
	next := make(chan int)
	workers := max(1, min(plan.tables, parallelism()))
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			order := make([]int32, u.rows)
			for t := range next {
				found[t] = *set.child()
				u.tablePairs(&found[t], names, codes, plan.tables, t, order, threshold)
			}
		}()
	}
	for t := range plan.tables {
		next <- t
	}
	close(next)
	wg.Wait()
	for t := range found {
		set.merge(&found[t])
	}
}

// hashCodes gives each row its k-bit code in every table, row-major: codes[i*tables+t].
func (u *Unit) hashCodes(plan lshPlan) []uint32 {
	rng := rand.New(rand.NewPCG(0x6c6f63756d, 0x6c7368))
	planes := make([]float32, plan.bits*plan.tables*u.dim)
	for i := range planes {
		planes[i] = float32(rng.NormFloat64())
	}
	codes := make([]uint32, u.rows*plan.tables)
	nplanes := plan.bits * plan.tables
	plane := func(h int) []float32 { return planes[h*u.dim : (h+1)*u.dim] }
	set := func(i, h int, dot float32) {
		if dot >= 0 {
			codes[i*plan.tables+h/plan.bits] |= 1 << (h % plan.bits)
		}
	}
	parallel((u.rows+1)/2, func(from, to int) {
		var dots [8]float32
		for pair := from; pair < to; pair++ {
			i := 2 * pair
			if i+1 >= u.rows || !hasDot2x4 || u.dim%8 != 0 {
				for r := i; r < min(i+2, u.rows); r++ {
					for h := range nplanes {
						set(r, h, vek32.Dot(u.row(r), plane(h)))
					}
				}
				continue
			}
			h := 0
			for ; h+4 <= nplanes; h += 4 {
				dot2x4(u.row(i), u.row(i+1), plane(h), plane(h+1), plane(h+2), plane(h+3), &dots)
				for k := range 4 {
					set(i, h+k, dots[k])
					set(i+1, h+k, dots[4+k])
				}
			}
			for ; h < nplanes; h++ {
				set(i, h, vek32.Dot(u.row(i), plane(h)))
				set(i+1, h, vek32.Dot(u.row(i+1), plane(h)))
			}
		}
	})
	return codes
}

// tablePairs scores the pairs that share a bucket in table t and in no earlier table (so each
// candidate is scored once, without a set of the pairs seen).
func (u *Unit) tablePairs(out *pairSet, names []string, codes []uint32, tables, t int, order []int32, threshold float64) {
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		ca, cb := codes[int(a)*tables+t], codes[int(b)*tables+t]
		switch {
		case ca < cb:
			return -1
		case ca > cb:
			return 1
		}
		return int(a - b)
	})
	for start := 0; start < len(order); {
		code := codes[int(order[start])*tables+t]
		end := start + 1
		for end < len(order) && codes[int(order[end])*tables+t] == code {
			end++
		}
		for x := start; x < end; x++ {
			i := int(order[x])
			for y := x + 1; y < end; y++ {
				j := int(order[y])
				if earlierCollision(codes, tables, t, i, j) {
					continue
				}
				if s := float64(vek32.Dot(u.row(i), u.row(j))); atLeast(s, threshold) {
					out.add(Pair{Score: round4(math.Max(-1, math.Min(1, s))), A: names[i], B: names[j], i: i, j: j})
				}
			}
		}
		start = end
	}
}

func earlierCollision(codes []uint32, tables, t, i, j int) bool {
	ci, cj := codes[i*tables:i*tables+t], codes[j*tables:j*tables+t]
	for k := range ci {
		if ci[k] == cj[k] {
			return true
		}
	}
	return false
}

// ExactEstimate is how long SimilarPairs would take on u, from timing a sample of its dot
// products on this machine as it is loaded now.
func (u *Unit) ExactEstimate() time.Duration {
	sample := min(u.rows, 128)
	start := time.Now()
	var sink float32
	for i := range sample {
		for j := range sample {
			sink += vek32.Dot(u.row(i), u.row(j))
		}
	}
	per := time.Since(start).Seconds() / float64(sample*sample)
	_ = sink
	pairs := float64(u.rows) * float64(u.rows-1) / 2
	return time.Duration(per * pairs / float64(parallelism()) * float64(time.Second))
}

func parallelism() int { return runtime.GOMAXPROCS(0) }

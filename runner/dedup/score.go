package dedup

import (
	"math"
	"runtime"
	"sort"
	"sync/atomic"

	"github.com/viterin/vek/vek32"
)

// Pair is two entries and their score, to four decimals: the cosine of their vectors, or the
// lexical score (LexicalScore).
type Pair struct {
	Score float64 `json:"score"`
	A     string  `json:"a"`
	B     string  `json:"b"`
	// Inside names the entry whose shingles lie inside the other's, when the score is that share
	// rather than a Jaccard; "" otherwise.
	Inside string `json:"inside,omitempty"`
	i, j   int
}

// ScoreTile is how many rows one tile of the score matrix holds on each side: two tiles of
// 256 rows of 768 float32s are 1.5 MiB, so a tile pair stays in one core's L2 cache while every
// score of it is computed, and nothing of the score matrix is ever stored.
const ScoreTile = 256

// Unit is the entries' vectors as float32 rows, each scaled to length 1 once. Embedding models
// compute in float32, so float32 loses nothing they had, and halves the work.
type Unit struct {
	rows, dim int
	vecs      [][]float32
}

// Normalize gives the vectors as rows each scaled to length 1 (in float64, then stored as
// float32), in new rows. A zero vector stays zero, so it scores 0 against everything rather than
// NaN.
func Normalize[F float32 | float64](vectors [][]F) *Unit {
	rows := make([][]float32, len(vectors))
	for i, v := range vectors {
		rows[i] = make([]float32, len(v))
		for k, x := range v {
			rows[i][k] = float32(x)
		}
	}
	return NormalizeInPlace(rows)
}

// NormalizeInPlace scales each row to length 1 where it is, so a hundred thousand vectors are
// held once, not twice; the rows become the Unit's.
func NormalizeInPlace(rows [][]float32) *Unit {
	if len(rows) == 0 {
		return nil
	}
	u := &Unit{rows: len(rows), dim: len(rows[0]), vecs: rows}
	for _, row := range rows {
		var sum float64
		for _, x := range row {
			sum += float64(x) * float64(x)
		}
		if sum == 0 {
			continue
		}
		n := math.Sqrt(sum)
		for k, x := range row {
			row[k] = float32(float64(x) / n)
		}
	}
	return u
}

func (u *Unit) row(i int) []float32 { return u.vecs[i] }

// SimilarPairs scores every pair of rows and returns the pairs at or above threshold, highest
// first, ties in name order. Tiles of the upper triangle go to one worker per core; within a tile
// an AVX2 kernel scores two rows against four at once (dot2x4, where the CPU has AVX2 and FMA and
// the dimension is a multiple of 8; vek's dot product elsewhere), each score compared with the
// threshold at once, so memory holds the vectors and the pairs found, nothing more.
func SimilarPairs(u *Unit, names []string, threshold float64) []Pair {
	set := &pairSet{}
	similarPairs(u, names, threshold, set)
	return set.sorted()
}

// similarPairs adds the pairs SimilarPairs finds to set, each worker keeping its own set of the
// same limit until the end.
func similarPairs(u *Unit, names []string, threshold float64, set *pairSet) {
	if u == nil || u.dim == 0 {
		return
	}
	tiles := (u.rows + ScoreTile - 1) / ScoreTile
	var next atomic.Int64
	total := int64(tiles * (tiles + 1) / 2)
	set.inWorkers(runtime.GOMAXPROCS(0), func(out *pairSet, _, _ int) {
		for {
			k := next.Add(1) - 1
			if k >= total {
				return
			}
			ti, tj := triangle(int(k), tiles)
			u.scoreTile(out, names, ti*ScoreTile, tj*ScoreTile, threshold)
		}
	})
}

// triangle maps k in [0, tiles*(tiles+1)/2) to the tile pair (ti, tj) with ti <= tj, row by row.
func triangle(k, tiles int) (int, int) {
	ti := 0
	for k >= tiles-ti {
		k -= tiles - ti
		ti++
	}
	return ti, ti + k
}

func (u *Unit) scoreTile(out *pairSet, names []string, bi, bj int, threshold float64) {
	ei, ej := min(bi+ScoreTile, u.rows), min(bj+ScoreTile, u.rows)
	add := func(i, j int, s float32) {
		if j > i && atLeast(float64(s), threshold) {
			out.add(Pair{Score: round4(math.Max(-1, math.Min(1, float64(s)))), A: names[i], B: names[j], i: i, j: j})
		}
	}
	i := bi
	if hasDot2x4 && u.dim >= 8 && u.dim%8 == 0 {
		// Two rows against four at a time; on a diagonal tile the pairs below it are computed
		// and dropped, which costs less than breaking the blocks up.
		var dots [8]float32
		for ; i+2 <= ei; i += 2 {
			j := bj
			if bi == bj {
				j = i - (i-bj)%4
			}
			for ; j+4 <= ej; j += 4 {
				dot2x4(u.row(i), u.row(i+1), u.row(j), u.row(j+1), u.row(j+2), u.row(j+3), &dots)
				for k := range 4 {
					add(i, j+k, dots[k])
					add(i+1, j+k, dots[4+k])
				}
			}
			for ; j < ej; j++ {
				add(i, j, vek32.Dot(u.row(i), u.row(j)))
				add(i+1, j, vek32.Dot(u.row(i+1), u.row(j)))
			}
		}
	}
	for ; i < ei; i++ {
		from := bj
		if bi == bj {
			from = i + 1
		}
		for j := from; j < ej; j++ {
			add(i, j, vek32.Dot(u.row(i), u.row(j)))
		}
	}
}

// atLeast compares a score with the threshold allowing for float32 rounding in the products: a
// pair exactly at the threshold is listed.
func atLeast(score, threshold float64) bool { return score >= threshold-1e-6 }

// SortPairs orders pairs highest score first (as printed, to four decimals), ties by file names.
func SortPairs(p []Pair) {
	sort.Slice(p, func(x, y int) bool { return ranksBefore(p[x], p[y]) })
}

// sortGroups orders groups largest first, ties by their first member's name.
func sortGroups(g []Group) {
	sort.Slice(g, func(x, y int) bool {
		if len(g[x].Files) != len(g[y].Files) {
			return len(g[x].Files) > len(g[y].Files)
		}
		return g[x].Files[0] < g[y].Files[0]
	})
}

// NestedLoopPairs is the plain cosine over every pair, the baseline the benchmark compares with,
// and the reference the tests check SimilarPairs against.
func NestedLoopPairs(vectors [][]float64, names []string, threshold float64) []Pair {
	var out []Pair
	for i := range vectors {
		for j := i + 1; j < len(vectors); j++ {
			var dot, ni, nj float64
			for k := range vectors[i] {
				dot += vectors[i][k] * vectors[j][k]
				ni += vectors[i][k] * vectors[i][k]
				nj += vectors[j][k] * vectors[j][k]
			}
			s := 0.0
			if ni > 0 && nj > 0 {
				s = dot / math.Sqrt(ni*nj)
			}
			if atLeast(s, threshold) {
				out = append(out, Pair{Score: round4(s), A: names[i], B: names[j], i: i, j: j})
			}
		}
	}
	SortPairs(out)
	return out
}

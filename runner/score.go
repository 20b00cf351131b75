package runner

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"
)

// Pair is two entries and their cosine similarity.
type Pair struct {
	Score float64 `json:"score"`
	A     string  `json:"a"`
	B     string  `json:"b"`
	i, j  int
}

// ScoreBlock is how many rows one block product holds: two 512×512 blocks of scores are 4 MiB,
// whatever the number of files.
const ScoreBlock = 512

// Normalize stacks the vectors as rows of a matrix, each scaled to length 1 once. A zero vector
// stays zero, so it scores 0 against everything rather than NaN.
func Normalize(vectors [][]float64) *mat.Dense {
	if len(vectors) == 0 {
		return nil
	}
	m := mat.NewDense(len(vectors), len(vectors[0]), nil)
	for i, v := range vectors {
		row := m.RawRowView(i)
		copy(row, v)
		if n := floats.Norm(row, 2); n > 0 {
			floats.Scale(1/n, row)
		}
	}
	return m
}

// SimilarPairs scores every pair of rows of a normalised matrix by block matrix products and
// returns those at or above threshold, highest first, ties in name order.
func SimilarPairs(m *mat.Dense, names []string, threshold float64) []Pair {
	if m == nil {
		return nil
	}
	n, _ := m.Dims()
	var out []Pair
	var prod mat.Dense
	for bi := 0; bi < n; bi += ScoreBlock {
		ei := min(bi+ScoreBlock, n)
		a := m.Slice(bi, ei, 0, m.RawMatrix().Cols)
		for bj := bi; bj < n; bj += ScoreBlock {
			ej := min(bj+ScoreBlock, n)
			b := m.Slice(bj, ej, 0, m.RawMatrix().Cols)
			prod.Reset()
			prod.Mul(a, b.T())
			for r := 0; r < ei-bi; r++ {
				row := prod.RawRowView(r)
				c0 := 0
				if bi == bj {
					c0 = r + 1
				}
				for c := c0; c < ej-bj; c++ {
					if s := row[c]; atLeast(s, threshold) {
						out = append(out, Pair{Score: math.Max(-1, math.Min(1, s)), i: bi + r, j: bj + c})
					}
				}
			}
		}
	}
	for k := range out {
		out[k].A, out[k].B = names[out[k].i], names[out[k].j]
	}
	SortPairs(out)
	return out
}

// atLeast compares a score with the threshold allowing for rounding in the products: a pair
// exactly at the threshold is listed.
func atLeast(score, threshold float64) bool { return score >= threshold-1e-12 }

// SortPairs orders pairs highest score first (as printed, to three decimals), ties by file names.
func SortPairs(p []Pair) {
	sort.Slice(p, func(x, y int) bool {
		sx, sy := math.Round(p[x].Score*1000), math.Round(p[y].Score*1000)
		if sx != sy {
			return sx > sy
		}
		if p[x].A != p[y].A {
			return p[x].A < p[y].A
		}
		return p[x].B < p[y].B
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
				out = append(out, Pair{Score: s, A: names[i], B: names[j], i: i, j: j})
			}
		}
	}
	SortPairs(out)
	return out
}

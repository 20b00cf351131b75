package runner

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/floats"
)

// Pair is two entries and their cosine similarity.
type Pair struct {
	Score float64 `json:"score"`
	A     string  `json:"a"`
	B     string  `json:"b"`
	i, j  int
}

// ScoreBlock is how many rows one block product holds: a 1024×1024 block of float32 scores is
// 4 MiB, whatever the number of files.
const ScoreBlock = 1024

// Unit is the entries' vectors as rows of a float32 matrix, each scaled to length 1 once.
// Embedding models compute in float32, so float32 loses nothing they had, and halves the work.
type Unit struct {
	rows, dim int
	data      []float32
}

// Normalize stacks the vectors as rows, each scaled to length 1 once (in float64, then stored as
// float32). A zero vector stays zero, so it scores 0 against everything rather than NaN.
func Normalize(vectors [][]float64) *Unit {
	if len(vectors) == 0 {
		return nil
	}
	u := &Unit{rows: len(vectors), dim: len(vectors[0])}
	u.data = make([]float32, u.rows*u.dim)
	for i, v := range vectors {
		n := floats.Norm(v, 2)
		row := u.data[i*u.dim : (i+1)*u.dim]
		for k, x := range v {
			if n > 0 {
				row[k] = float32(x / n)
			}
		}
	}
	return u
}

func (u *Unit) block(from, to int) blas32.General {
	return blas32.General{Rows: to - from, Cols: u.dim, Stride: u.dim, Data: u.data[from*u.dim : to*u.dim]}
}

// SimilarPairs scores every pair of rows by block matrix products (a symmetric rank-k update on
// the diagonal blocks, where only one triangle is needed) and returns the pairs at or above
// threshold, highest first, ties in name order.
func SimilarPairs(u *Unit, names []string, threshold float64) []Pair {
	if u == nil {
		return nil
	}
	n := u.rows
	var out []Pair
	scratch := make([]float32, ScoreBlock*ScoreBlock)
	for bi := 0; bi < n; bi += ScoreBlock {
		ei := min(bi+ScoreBlock, n)
		a := u.block(bi, ei)
		for bj := bi; bj < n; bj += ScoreBlock {
			ej := min(bj+ScoreBlock, n)
			rows, cols := ei-bi, ej-bj
			c := blas32.General{Rows: rows, Cols: cols, Stride: cols, Data: scratch[:rows*cols]}
			if bi == bj {
				blas32.Syrk(blas.NoTrans, 1, a, 0, blas32.Symmetric{N: rows, Stride: cols, Data: c.Data, Uplo: blas.Upper})
			} else {
				blas32.Gemm(blas.NoTrans, blas.Trans, 1, a, u.block(bj, ej), 0, c)
			}
			for r := 0; r < rows; r++ {
				c0 := 0
				if bi == bj {
					c0 = r + 1
				}
				row := c.Data[r*cols : (r+1)*cols]
				for col := c0; col < cols; col++ {
					if s := float64(row[col]); atLeast(s, threshold) {
						out = append(out, Pair{Score: math.Max(-1, math.Min(1, s)), i: bi + r, j: bj + col})
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

// atLeast compares a score with the threshold allowing for float32 rounding in the products: a
// pair exactly at the threshold is listed.
func atLeast(score, threshold float64) bool { return score >= threshold-1e-6 }

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

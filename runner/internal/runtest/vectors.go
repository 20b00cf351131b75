package runtest

import (
	"math"
	"math/rand/v2"
)

// RandomUnit draws n random unit vectors of dim dimensions.
func RandomUnit(rng *rand.Rand, n, dim int) [][]float64 {
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

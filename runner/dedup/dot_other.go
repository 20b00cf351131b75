//go:build !amd64

package dedup

import "github.com/viterin/vek/vek32"

var hasDot2x4 = false

func dot2x4(a0, a1, b0, b1, b2, b3 []float32, out *[8]float32) {
	for k, b := range [4][]float32{b0, b1, b2, b3} {
		out[k], out[4+k] = vek32.Dot(a0, b), vek32.Dot(a1, b)
	}
}

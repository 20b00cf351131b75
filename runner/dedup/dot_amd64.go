package dedup

import "golang.org/x/sys/cpu"

// hasDot2x4 says the CPU runs dot2x4AVX2 (AVX2 and FMA).
var hasDot2x4 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dot2x4AVX2(a0, a1, b0, b1, b2, b3 *float32, blocks int, out *[64]float32)

// dot2x4 gives the dot products of a0 and a1 with b0..b3, in that order (a0·b0, a0·b1, ...,
// a1·b3). Every slice has the same length, a multiple of 8 of at least 8.
func dot2x4(a0, a1, b0, b1, b2, b3 []float32, out *[8]float32) {
	var lanes [64]float32
	dot2x4AVX2(&a0[0], &a1[0], &b0[0], &b1[0], &b2[0], &b3[0], len(a0)/8, &lanes)
	for k := range out {
		var s float32
		for _, x := range lanes[k*8 : k*8+8] {
			s += x
		}
		out[k] = s
	}
}

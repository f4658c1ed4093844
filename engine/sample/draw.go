package sample

import "math"

// The two pieces of arithmetic a draw needs beyond +, −, × and ÷, spelled
// out so that kernels/draw.cu can repeat them operation for operation: the
// GPU draws sampled tokens on the device (gpu.Sampling) and must pick what
// this package picks, bit for bit. math.Exp and CUDA's exp are each within
// an ulp of e^x but not always the same ulp, and a pseudo-random generator
// with hidden state cannot be stepped on the device; a counter-based stream
// can. Every product that is added to something is an explicit FMA here and
// there, so neither compiler can fuse differently.

// Uniform is draw i of seed's stream: a number in [0, 1) with 53 random
// bits, splitmix64's output function over seed + (i+1)·γ. Sampler.Sample
// takes draw i for the i-th token it picks.
func Uniform(seed, i uint64) float64 {
	z := seed + (i+1)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) * 0x1p-53
}

// expLimit is where exp gives up on the normal range: below it e^x
// (< 3.3e-308) is 0 beside the top candidate's weight of 1.
const expLimit = -708

// exp is e^x within about an ulp (TestExpMatchesMath) from floor, FMAs and
// an exact power-of-two scaling: x = n·ln 2 + r with |r| ≤ ln 2 / 2, e^r by
// its Taylor series to r^13 (truncation < 1e-17), times 2^n.
func exp(x float64) float64 {
	switch {
	case x != x:
		return x
	case x < expLimit:
		return 0
	case x > 709:
		return math.Inf(1)
	}
	const (
		log2e = 0x1.71547652b82fep+00
		ln2Hi = 0x1.62e42fee00000p-01 // 32 significant bits: n·ln2Hi is exact
		ln2Lo = 0x1.a39ef35793c76p-33
	)
	n := math.Floor(math.FMA(x, log2e, 0.5))
	r := math.FMA(-n, ln2Hi, x)
	r = math.FMA(-n, ln2Lo, r)
	// 1/k! for k = 13 … 1; k! < 2^53, so each quotient rounds once, here and in C.
	p := 1.0 / 6227020800
	p = math.FMA(p, r, 1.0/479001600)
	p = math.FMA(p, r, 1.0/39916800)
	p = math.FMA(p, r, 1.0/3628800)
	p = math.FMA(p, r, 1.0/362880)
	p = math.FMA(p, r, 1.0/40320)
	p = math.FMA(p, r, 1.0/5040)
	p = math.FMA(p, r, 1.0/720)
	p = math.FMA(p, r, 1.0/120)
	p = math.FMA(p, r, 1.0/24)
	p = math.FMA(p, r, 1.0/6)
	p = math.FMA(p, r, 0.5)
	p = math.FMA(p, r, 1)
	p = math.FMA(p, r, 1)
	return math.Ldexp(p, int(n))
}

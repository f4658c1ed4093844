package sample

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// Uniform is splitmix64: its published first outputs for state 0 (Steele,
// Lea and Flood 2014; Vigna's splitmix64.c, the seeds of xoshiro256**),
// top 53 bits as a fraction.
func TestUniformIsSplitMix64(t *testing.T) {
	for i, ref := range []uint64{0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f, 0xf88bb8a8724c81ec} {
		if got, want := Uniform(0, uint64(i)), float64(ref>>11)/(1<<53); got != want {
			t.Errorf("Uniform(0, %d) = %v, want %v", i, got, want)
		}
	}
	const n = 200000
	var sum float64
	for i := range uint64(n) {
		u := Uniform(12345, i)
		if u < 0 || u >= 1 {
			t.Fatalf("Uniform(12345, %d) = %v, outside [0, 1)", i, u)
		}
		sum += u
	}
	// Mean of n uniforms: 0.5 ± sqrt(1/12/n); 5 standard deviations.
	if sd := math.Sqrt(1.0 / 12 / n); math.Abs(sum/n-0.5) > 5*sd {
		t.Errorf("mean of %d draws %v, want 0.5 ± %.5f", n, sum/n, 5*sd)
	}
	if Uniform(1, 0) == Uniform(2, 0) {
		t.Error("seeds 1 and 2 start alike")
	}
}

// exp against e^x to 300 bits (math/big: e^(x/2^20) by its series, squared
// 20 times, which loses 20 of the bits), rounded to float64: the bound is 1
// ulp from that correctly rounded value, which math.Exp (Go's amd64
// assembly) does not always meet (2 ulp from it at x = −1.0442010538806776;
// 1.6 ulp from e^x itself).
func TestExpWithinAnUlp(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	xs := []float64{0, 1, -1, 0.5 * math.Ln2, -0.5 * math.Ln2, expLimit, -707.9, 709, 300, -1e-300, -1e-17}
	for range 2000 {
		xs = append(xs, -r.Float64()*708, -r.Float64()*2, r.Float64()*709)
	}
	worst := 0.0
	for _, x := range xs {
		want, _ := bigExp(x).Float64()
		ulp := math.Nextafter(want, math.Inf(1)) - want
		d := math.Abs(exp(x)-want) / ulp
		if d > 1 {
			t.Fatalf("exp(%v) = %v, e^x ≈ %v: %.2f ulp apart", x, exp(x), want, d)
		}
		worst = max(worst, d)
	}
	t.Logf("largest error: %.3f ulp", worst)
	for _, c := range []struct{ x, want float64 }{{math.Inf(-1), 0}, {-709, 0}, {710, math.Inf(1)}} {
		if got := exp(c.x); got != c.want {
			t.Errorf("exp(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	if got := exp(math.NaN()); !math.IsNaN(got) {
		t.Errorf("exp(NaN) = %v", got)
	}
}

func bigExp(x float64) *big.Float {
	const prec, k = 300, 20
	f := func(v float64) *big.Float { return new(big.Float).SetPrec(prec).SetFloat64(v) }
	y := f(math.Ldexp(x, -k))
	sum, term := f(1), f(1)
	for i := 1; i < 40; i++ {
		term.Mul(term, y)
		term.Quo(term, f(float64(i)))
		sum.Add(sum, term)
	}
	for range k {
		sum.Mul(sum, sum)
	}
	return sum
}

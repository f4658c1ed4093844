package kernels

import (
	"math"
	"os"
	"regexp"
	"strconv"
	"testing"
)

// f16Value decodes an IEEE half (finite values only).
func f16Value(h uint16) float64 {
	e, m := int(h>>10&31), float64(h&1023)
	v := math.Ldexp(m, -24) // subnormal
	if e > 0 {
		v = math.Ldexp(1024+m, e-25)
	}
	if h&0x8000 != 0 {
		return -v
	}
	return v
}

// f16Exact reports whether v is a finite half exactly: an f16 operation
// whose exact result is one returns it whatever the rounding.
func f16Exact(v float64) bool {
	if v == 0 {
		return true
	}
	_, e := math.Frexp(math.Abs(v)) // |v| = m·2^e, m in [0.5, 1)
	if e > 16 {
		return false
	}
	step := math.Ldexp(1, max(e-11, -24)) // the spacing of halves at |v|
	return math.Mod(v, step) == 0
}

// TestQ6PairExact checks matvec_q6k.cu's memra_q6t_pair, the one A operand
// q − 32 = n + 16h − 32 of a Q6_K pair, for every nibble n, high-bit pair h
// and position K: with the constants as written there, the high bits'
// f16 fma gives t = 16h + c exactly and the nibble's add or fma gives q −
// 32 exactly (each step's exact result is a half, so its one rounding
// changes nothing). The old two operands summed to the same q − 32.
func TestQ6PairExact(t *testing.T) {
	src, err := os.ReadFile("matvec_q6k.cu")
	if err != nil {
		t.Fatal(err)
	}
	// half is the value of an f16x2 word written as 0xHHHHLLLLu whose two
	// halves are alike (the pair's both values take the same constant).
	half := func(w []byte) float64 {
		x, _ := strconv.ParseUint(string(w), 16, 32)
		if x>>16 != x&0xffff {
			t.Fatalf("matvec_q6k.cu: 0x%s: the halves differ", w)
		}
		return f16Value(uint16(x))
	}
	words := func(name string) [4]float64 {
		m := regexp.MustCompile(`constexpr unsigned int ` + name + `\[4\] = \{0x([0-9A-F]{8})u, 0x([0-9A-F]{8})u, 0x([0-9A-F]{8})u, 0x([0-9A-F]{8})u\};`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("matvec_q6k.cu: memra_q6t_pair's %s[4] not found", name)
		}
		var r [4]float64
		for k := range 4 {
			r[k] = half(m[k+1])
		}
		return r
	}
	scale, off := words("scale"), words("off")
	m := regexp.MustCompile(`memra_hfma2\(memra_or1024\(nw, 0x00F000F0u\), 0x([0-9A-F]{8})u, t\)`).FindSubmatch(src)
	if m == nil {
		t.Fatal("matvec_q6k.cu: the high nibbles' fma in memra_q6t_pair not found")
	}
	sixteenth := half(m[1])
	for k := range 4 {
		for h := range 4 {
			raw := 1024 + math.Ldexp(float64(h), 2*k) // the pair's bits under 1024
			tv := raw*scale[k] + off[k]
			if !f16Exact(tv) {
				t.Fatalf("K=%d h=%d: t = %g is not a half", k, h, tv)
			}
			for n := range 16 {
				var a float64
				if k < 2 {
					a = (1024 + float64(n)) + tv
				} else {
					a = (1024+16*float64(n))*sixteenth + tv
				}
				if !f16Exact(a) || a != float64(n+16*h-32) {
					t.Errorf("K=%d h=%d n=%d: operand %g, want %d", k, h, n, a, n+16*h-32)
				}
			}
		}
	}
}

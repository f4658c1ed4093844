package kernels

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The e4m3 values listed from the format's definition, independent of the
// decoder: 2^-9 * m for subnormals, (1 + m/8) * 2^(e-7) otherwise.
func e4m3Table() []float64 {
	var v []float64
	for c := 0; c < 0x7f; c++ { // positive codes, NaN (0x7f) excluded
		e, m := c>>3, c&7
		if e == 0 {
			v = append(v, float64(m)*math.Pow(2, -9))
		} else {
			v = append(v, (1+float64(m)/8)*math.Pow(2, float64(e-7)))
		}
	}
	return v
}

func TestE4M3Decode(t *testing.T) {
	tab := e4m3Table()
	for c := 0; c < 256; c++ {
		got := E4M3ToFloat32(uint8(c))
		if c&0x7f == 0x7f {
			if !math.IsNaN(float64(got)) {
				t.Errorf("code %#x decodes to %v, want NaN", c, got)
			}
			continue
		}
		want := tab[c&0x7f]
		if c&0x80 != 0 {
			want = -want
		}
		if float64(got) != want || math.Signbit(float64(got)) != (c&0x80 != 0) {
			t.Errorf("code %#x decodes to %v, want %v", c, got, want)
		}
	}
}

// refEncode finds the nearest representable value by scanning the table,
// ties to the even code (even mantissa), saturating at 448.
func refEncode(x float32, tab []float64) uint8 {
	var s uint8
	a := float64(x)
	if math.Signbit(a) {
		s, a = 0x80, -a
	}
	if math.IsNaN(a) {
		return s | 0x7f
	}
	best := 0
	for c := 1; c < len(tab); c++ {
		d, bd := math.Abs(tab[c]-a), math.Abs(tab[best]-a)
		if d < bd || (d == bd && c%2 == 0) {
			best = c
		}
	}
	return s | uint8(best)
}

func TestE4M3EncodeMatchesNearest(t *testing.T) {
	tab := e4m3Table()
	r := rand.New(rand.NewPCG(1, 2))
	var xs []float32
	// every code, every midpoint between neighbours, and nudges around them
	for c := 0; c < len(tab); c++ {
		xs = append(xs, float32(tab[c]))
		if c+1 < len(tab) {
			mid := float32((tab[c] + tab[c+1]) / 2) // exact in f32
			xs = append(xs, mid, math.Nextafter32(mid, 0), math.Nextafter32(mid, 1000))
		}
	}
	xs = append(xs, 448, 449, 464, 1e6, float32(math.Inf(1)), 0, 1e-30)
	for i := 0; i < 20000; i++ {
		xs = append(xs, float32(r.NormFloat64()*math.Pow(2, float64(r.IntN(24)-14))))
	}
	for _, x := range xs {
		for _, v := range []float32{x, -x} {
			if got, want := E4M3FromFloat32(v), refEncode(v, tab); got != want {
				t.Fatalf("E4M3FromFloat32(%g) = %#x, nearest is %#x", v, got, want)
			}
		}
	}
	if got := E4M3FromFloat32(float32(math.NaN())); got&0x7f != 0x7f {
		t.Errorf("NaN encodes to %#x", got)
	}
}

func TestKVScaleFP8(t *testing.T) {
	s, inv := KVScaleFP8(0)
	if s != 0 || inv != 0 {
		t.Errorf("KVScaleFP8(0) = %v, %v; want 0, 0", s, inv)
	}
	// amax maps to (at most) 448 and round-trips within e4m3's half-ulp (2^-4 relative).
	amax := float32(3.7)
	s, inv = KVScaleFP8(amax)
	back := E4M3ToFloat32(E4M3FromFloat32(amax*inv)) * s
	if math.Abs(float64(back-amax)) > float64(amax)/16 {
		t.Errorf("amax %v round-trips to %v", amax, back)
	}
}

package main

import (
	"math"
	"testing"
	"unsafe"

	"github.com/memra-ai/memra/engine/cuda"
)

// mixF32 is prm_mix in f32 on the host, in its order of operations (each
// row's two halves of 64 summed apart, then added; fma for the state's
// update), with V head h reading K head kh(h): what checkMix must accept
// from the kernel, and, with the wrong kh, reject.
func mixF32(in mixIn, v []float32, kh func(int) int) (s []float32, tail []byte) {
	s = make([]float32, len(in.s))
	y := make([]float32, mixHeads*mixD)
	f := func(x float64) float32 { return float32(x) }
	for h := range mixHeads {
		q, k := in.q[kh(h)*mixD:][:mixD], in.k[kh(h)*mixD:][:mixD]
		var sq, sk [2]float32
		for i := range mixD {
			sq[i/64] += q[i] * q[i]
			sk[i/64] += k[i] * k[i]
		}
		iq := float32(0.0883883476) / max(f(math.Sqrt(float64(sq[0]+sq[1]))), 1e-6)
		ik := 1 / max(f(math.Sqrt(float64(sk[0]+sk[1]))), 1e-6)
		e := f(math.Exp(float64(in.g[h])))
		o := make([]float32, mixD)
		for j := range mixD {
			row := (h*mixD + j) * mixD
			var kv [2]float32
			for i := range mixD {
				kv[i/64] += in.s[row+i] * e * (k[i] * ik)
			}
			d := in.beta[h] * (v[h*mixD+j] - (kv[0] + kv[1]))
			var oj [2]float32
			for i := range mixD {
				s[row+i] = f(math.FMA(float64(d), float64(k[i]*ik), float64(in.s[row+i]*e)))
				oj[i/64] += s[row+i] * (q[i] * iq)
			}
			o[j] = oj[0] + oj[1]
		}
		var ss float32
		for j := range mixD {
			ss += o[j] * o[j]
		}
		inv := 1 / f(math.Sqrt(float64(ss/mixD+1e-6)))
		for j := range mixD {
			z := in.z[h*mixD+j]
			y[h*mixD+j] = o[j] * inv * in.sn[j] * (z / (1 + f(math.Exp(float64(-z)))))
		}
	}
	n := len(y)
	tail = make([]byte, n+4*(n/32))
	d := make([]float32, n/32)
	for g := range n / 32 {
		var m float32
		for _, x := range y[32*g : 32*g+32] {
			m = max(m, float32(math.Abs(float64(x))))
		}
		d[g] = m / 127
		id := float32(0)
		if d[g] > 0 {
			id = 1 / d[g]
		}
		for c := 32 * g; c < 32*g+32; c++ {
			tail[c] = byte(int8(math.RoundToEven(float64(y[c] * id))))
		}
	}
	copy(tail[n:], cuda.AsBytes(d))
	return s, tail
}

// TestMixCheck: checkMix takes prm_mix's f32 arithmetic on random inputs
// (never zero) and rejects a wrong K head for a V head, an int8 one
// quantum off, a state value off by 1e-4 of itself, and a scale off by
// 1e-2 of itself (y's bounds, sums of magnitudes over sums that cancel,
// are ~3e-3 of |y| on average here, so a scale is held to about that: a
// wrong head, gate or norm is off by far more).
func TestMixCheck(t *testing.T) {
	in := randomMix(3)
	v := randomMix(4).z // 4,096 values in ±(0.05, 2): the residual's stand-in
	ref := mixRef(in, v)
	tiled := func(h int) int { return h % mixKHeads }
	s, tail := mixF32(in, v, tiled)
	if err := checkMix(ref, s, tail); err != nil {
		t.Fatalf("prm_mix's arithmetic in f32: %v", err)
	}
	grouped := func(h int) int { return h / (mixHeads / mixKHeads) }
	if s2, tail2 := mixF32(in, v, grouped); checkMix(ref, s2, tail2) == nil {
		t.Errorf("V head h reading K head h/2 passed")
	}
	n := mixHeads * mixD
	for _, c := range []struct {
		name string
		bad  func(s []float32, tail []byte)
	}{
		{"an int8 a quantum off", func(_ []float32, tail []byte) { tail[777]++ }},
		{"a state value 1e-4 off", func(s []float32, _ []byte) { s[123456] *= 1 + 1e-4 }},
		{"a scale 1e-2 off", func(_ []float32, tail []byte) {
			d := (*float32)(unsafe.Pointer(&tail[n+4*17]))
			*d *= 1 + 1e-2
		}},
	} {
		s2, tail2 := append([]float32(nil), s...), append([]byte(nil), tail...)
		c.bad(s2, tail2)
		if checkMix(ref, s2, tail2) == nil {
			t.Errorf("%s passed", c.name)
		}
	}
}

// TestCheckOutQ: the projection's check takes a product in f32 and
// rejects one output 1e-3 off.
func TestCheckOutQ(t *testing.T) {
	w := weights{s: shape{64, 256}}
	w.quants, w.scales = randomQ8(w.s, 5)
	in := randomMix(6)
	x0 := in.z[:w.s.rows]
	y := in.z[1000 : 1000+w.s.cols]
	tail := make([]byte, w.s.cols+4*(w.s.cols/32))
	d := make([]float32, w.s.cols/32)
	for g := range d {
		d[g] = 0.01 * float32(g+1)
	}
	for c := range w.s.cols {
		tail[c] = byte(int8(math.Round(float64(y[c] * 50))))
	}
	copy(tail[w.s.cols:], cuda.AsBytes(d))
	got := make([]float32, w.s.rows)
	for i := range got {
		acc := x0[i]
		for c := range w.s.cols {
			acc += float32(w.at(i, c)) * float32(int8(tail[c])) * d[c/32]
		}
		got[i] = acc
	}
	if worst := checkOutQ(&w, x0, tail, got); worst > 1 {
		t.Fatalf("an f32 product: %.2f times the bound", worst)
	}
	got[7] *= 1 + 1e-3
	if worst := checkOutQ(&w, x0, tail, got); worst <= 1 {
		t.Errorf("an output 1e-3 off passed (%.2f times the bound)", worst)
	}
}

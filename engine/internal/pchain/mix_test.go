package main

import (
	"math"
	"testing"
	"unsafe"

	"github.com/memra-ai/memra/engine/cuda"
)

// mixF32 is prm_mix (four: prm_mix4) in f32 on the host: each row's sums
// in 2 (four: 8) partial sums, fma for the state's update, the partial
// sums added in sequence where the kernel uses shuffles and without
// nvcc's contractions (a bound test needs no closer replay), with V head h
// reading K head kh(h): what checkMix must accept from the kernel, and,
// with the wrong kh, reject.
// prm_mix rounds the gated norm's output y; prm_mix4 rounds w = y before
// the norm's 1/rms and stores each group's sum of o² after the scales.
func mixF32(in mixIn, v []float32, kh func(int) int, four bool) (s []float32, tail []byte) {
	parts := 2
	if four {
		parts = 8
	}
	span := mixD / parts
	s = make([]float32, len(in.s))
	n := mixHeads * mixD
	y, o2 := make([]float32, n), make([]float32, n/32)
	f := func(x float64) float32 { return float32(x) }
	sum := func(p []float32) (t float32) {
		for _, v := range p {
			t += v
		}
		return t
	}
	for h := range mixHeads {
		q, k := in.q[kh(h)*mixD:][:mixD], in.k[kh(h)*mixD:][:mixD]
		sq, sk := make([]float32, parts), make([]float32, parts)
		for i := range mixD {
			sq[i/span] += q[i] * q[i]
			sk[i/span] += k[i] * k[i]
		}
		iq := float32(0.0883883476) / max(f(math.Sqrt(float64(sum(sq)))), 1e-6)
		ik := 1 / max(f(math.Sqrt(float64(sum(sk)))), 1e-6)
		e := f(math.Exp(float64(in.g[h])))
		o := make([]float32, mixD)
		for j := range mixD {
			row := (h*mixD + j) * mixD
			kv, oj := make([]float32, parts), make([]float32, parts)
			for i := range mixD {
				kv[i/span] += in.s[row+i] * e * (k[i] * ik)
			}
			d := in.beta[h] * (v[h*mixD+j] - sum(kv))
			for i := range mixD {
				s[row+i] = f(math.FMA(float64(d), float64(k[i]*ik), float64(in.s[row+i]*e)))
				oj[i/span] += s[row+i] * (q[i] * iq)
			}
			o[j] = sum(oj)
		}
		var ss float32
		for j := range mixD {
			ss += o[j] * o[j]
			o2[(h*mixD+j)/32] += o[j] * o[j]
		}
		inv := 1 / f(math.Sqrt(float64(ss/mixD+1e-6)))
		if four {
			inv = 1
		}
		for j := range mixD {
			z := in.z[h*mixD+j]
			y[h*mixD+j] = o[j] * inv * in.sn[j] * (z / (1 + f(math.Exp(float64(-z)))))
		}
	}
	tail = make([]byte, n+8*(n/32))
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
	if four {
		copy(tail[n+4*(n/32):], cuda.AsBytes(o2))
	}
	return s, tail
}

// TestMixCheck: checkMix takes prm_mix's and prm_mix4's f32 arithmetic on
// random inputs (never zero) and rejects a wrong K head for a V head, an
// int8 one quantum off, a state value off by 1e-4 of itself, a scale off
// by 1e-2 of itself (y's bounds, sums of magnitudes over sums that cancel,
// are ~3e-3 of |y| on average here, so a scale is held to about that: a
// wrong head, gate or norm is off by far more), prm_mix4's output read as
// prm_mix's (no 1/rms), and with four a group's sum of o² 1e-2 off
// (its bound, from o's, is ~2e-3 of it).
func TestMixCheck(t *testing.T) {
	in := randomMix(3)
	v := randomMix(4).z // 4,096 values in ±(0.05, 2): the residual's stand-in
	ref := mixRef(in, v)
	n := mixHeads * mixD
	tiled := func(h int) int { return h % mixKHeads }
	grouped := func(h int) int { return h / (mixHeads / mixKHeads) }
	for _, four := range []bool{false, true} {
		s, tail := mixF32(in, v, tiled, four)
		if err := checkMix(ref, s, tail, four); err != nil {
			t.Fatalf("four %v: the kernel's arithmetic in f32: %v", four, err)
		}
		if checkMix(ref, s, tail, !four) == nil {
			t.Errorf("four %v: the output read as the other form's passed", four)
		}
		if s2, tail2 := mixF32(in, v, grouped, four); checkMix(ref, s2, tail2, four) == nil {
			t.Errorf("four %v: V head h reading K head h/2 passed", four)
		}
		bad := []struct {
			name string
			bad  func(s []float32, tail []byte)
		}{
			{"an int8 a quantum off", func(_ []float32, tail []byte) { tail[777]++ }},
			{"a state value 1e-4 off", func(s []float32, _ []byte) { s[123456] *= 1 + 1e-4 }},
			{"a scale 1e-2 off", func(_ []float32, tail []byte) {
				d := (*float32)(unsafe.Pointer(&tail[n+4*17]))
				*d *= 1 + 1e-2
			}},
		}
		if four {
			bad = append(bad, struct {
				name string
				bad  func(s []float32, tail []byte)
			}{"a sum of o² 1e-2 off", func(_ []float32, tail []byte) {
				o2 := (*float32)(unsafe.Pointer(&tail[n+4*(n/32)+4*45]))
				*o2 *= 1 + 1e-2
			}})
		}
		for _, c := range bad {
			s2, tail2 := append([]float32(nil), s...), append([]byte(nil), tail...)
			c.bad(s2, tail2)
			if checkMix(ref, s2, tail2, four) == nil {
				t.Errorf("four %v: %s passed", four, c.name)
			}
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
	if worst := checkOutQ(&w, x0, tail, nil, got); worst > 1 {
		t.Fatalf("an f32 product: %.2f times the bound", worst)
	}
	got[7] *= 1 + 1e-3
	if worst := checkOutQ(&w, x0, tail, nil, got); worst <= 1 {
		t.Errorf("an output 1e-3 off passed (%.2f times the bound)", worst)
	}
}

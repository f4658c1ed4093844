package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"unsafe"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/internal/evtime"
)

// kindMix is pc_phase.kind of a mixer phase (pchain.cu's prm_mix: the
// gated delta rule of the 9B preset's V heads, one block a head; it has
// no rows, so the ring streams the next phase's units through it).
const kindMix = 6

// The 9B preset's DeltaNet mixer (pchain.cu's PRM_*): V heads, K heads and
// the head dimension; V head h reads K head h mod mixKHeads (qwen35's tiled
// order).
const (
	mixHeads  = 32
	mixKHeads = 16
	mixD      = 128
)

// mixIn is a mixer phase's buffer on the host, in prm_mix's order: the
// state, then the stand-ins for the input projection's outputs.
type mixIn struct {
	s    []float32 // state: [mixHeads, mixD j, mixD i] f32
	q, k []float32 // [mixKHeads, mixD]
	z    []float32 // [mixHeads, mixD]
	g    []float32 // [mixHeads], the decay's log (negative)
	beta []float32 // [mixHeads], after its sigmoid
	sn   []float32 // [mixD], the gated norm's weights
}

// randomMix draws a mixer's buffer: no zeros, magnitudes as a trained
// layer's state and inputs might have them (the state ~U(−0.5, 0.5), the
// decay e^g in (0.14, 0.99), beta in (0.05, 0.95)).
func randomMix(seed uint64) mixIn {
	r := rand.New(rand.NewPCG(seed, 6))
	u := func(n int, lo, hi float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(lo + (hi-lo)*(0.001+0.998*r.Float64()))
		}
		return v
	}
	// Signs drawn apart, so that no value is near 0 by a range's centre.
	signed := func(n int, lo, hi float64) []float32 {
		v := u(n, lo, hi)
		for i := range v {
			if r.IntN(2) == 0 {
				v[i] = -v[i]
			}
		}
		return v
	}
	return mixIn{
		s: signed(mixHeads*mixD*mixD, 0.01, 0.5), q: signed(mixKHeads*mixD, 0.05, 1), k: signed(mixKHeads*mixD, 0.05, 1),
		z: signed(mixHeads*mixD, 0.05, 2), g: u(mixHeads, -2, -0.01), beta: u(mixHeads, 0.05, 0.95), sn: u(mixD, 0.5, 1.5),
	}
}

// device is the buffer as prm_mix reads it.
func (m mixIn) device() []byte {
	return cuda.AsBytes(slices.Concat(m.s, m.q, m.k, m.z, m.g, m.beta, m.sn))
}

// mixRef is the mixer in float64 on v (the residual the down phase wrote),
// with a bound on each value prm_mix computes in f32: the state after the
// step, and the gated norm's output y before its rounding to int8.
//
// The bounds are first-order sums of |value| times its relative rounding
// error, in u = 2⁻²⁴: c1 = 256u covers a 128-term f32 sum (γ₁₂₈ ≈ 128u)
// plus the factors' own errors (q and k over their norms, ~64u from a
// 128-term sum of squares halved by the square root, and a few u for
// sqrt, the division, expf's ≤ 2 ulp and the products), with room; each
// later value adds what its inputs' bounds carry into it.
type mixOut struct {
	s, bs   []float64 // state after, and its bound
	y, by   []float64 // [mixHeads·mixD]: the gated norm's output, and its bound
	w, bw   []float64 // the same before the norm's 1/rms (o·norm·silu(z)), prm_mix4's rounding
	o2, bo2 []float64 // [mixHeads·mixD/32]: each group of 32 rows' sum of o², and its bound
}

func mixRef(in mixIn, v []float32) mixOut {
	const u = 1.0 / (1 << 24)
	const c1 = 256 * u
	nv := mixHeads * mixD
	o := mixOut{s: make([]float64, len(in.s)), bs: make([]float64, len(in.s)), y: make([]float64, nv), by: make([]float64, nv),
		w: make([]float64, nv), bw: make([]float64, nv), o2: make([]float64, nv/32), bo2: make([]float64, nv/32)}
	for h := range mixHeads {
		hk := h % mixKHeads
		q, k := in.q[hk*mixD:][:mixD], in.k[hk*mixD:][:mixD]
		var sq, sk float64
		for i := range mixD {
			sq += float64(q[i]) * float64(q[i])
			sk += float64(k[i]) * float64(k[i])
		}
		iq := 1 / math.Max(math.Sqrt(sq), 1e-6) / math.Sqrt(mixD)
		ik := 1 / math.Max(math.Sqrt(sk), 1e-6)
		e := math.Exp(float64(in.g[h]))
		b := float64(in.beta[h])
		ob, oa := make([]float64, mixD), make([]float64, mixD) // o and its bound
		for j := range mixD {
			row := (h*mixD + j) * mixD
			var kv, akv float64
			for i := range mixD {
				p := float64(in.s[row+i]) * e * float64(k[i]) * ik
				kv += p
				akv += math.Abs(p)
			}
			vj := float64(v[h*mixD+j])
			d := b * (vj - kv)
			bd := b*c1*(akv+math.Abs(vj)) + 2*u*math.Abs(d)
			var oj, aoj, boj float64
			for i := range mixD {
				kn, qn := float64(k[i])*ik, float64(q[i])*iq
				m := float64(in.s[row+i]) * e
				s1 := m + d*kn
				bs := u*math.Abs(s1) + math.Abs(kn)*bd + c1*(math.Abs(d*kn)+math.Abs(m))
				o.s[row+i], o.bs[row+i] = s1, bs
				oj += s1 * qn
				aoj += math.Abs(s1 * qn)
				boj += bs * math.Abs(qn)
			}
			ob[j], oa[j] = oj, c1*aoj+boj
		}
		var ss, sob float64
		for j := range mixD {
			ss += ob[j] * ob[j]
			sob += math.Abs(ob[j]) * oa[j]
			g := (h*mixD + j) / 32
			o.o2[g] += ob[j] * ob[j]
			o.bo2[g] += 2*math.Abs(ob[j])*oa[j] + c1*ob[j]*ob[j]
		}
		inv := 1 / math.Sqrt(ss/mixD+1e-6)
		for j := range mixD {
			z := float64(in.z[h*mixD+j])
			gate := float64(in.sn[j]) * z / (1 + math.Exp(-z))
			y := ob[j] * inv * gate
			o.y[h*mixD+j] = y
			o.by[h*mixD+j] = math.Abs(y)*(c1+sob/ss) + math.Abs(gate)*inv*oa[j]
			o.w[h*mixD+j] = ob[j] * gate
			o.bw[h*mixD+j] = math.Abs(ob[j]*gate)*c1 + math.Abs(gate)*oa[j]
		}
	}
	return o
}

// checkMix holds a mixer's state after a step (s) and its output in int8
// with its scales (tail: the projection's input as prg_hq and prg_hd lay
// it out) to mixRef's bounds: the state within its bound, each scale
// within its block's largest bound over 127 (and 2 ulp), and each int8
// times its scale within half a quantum (and tieSlack's room for a
// rounding at a tie) plus the reference's bound. prm_mix rounds y, the
// gated norm's output; prm_mix4 (four) rounds w, y before the norm's
// 1/rms, and stores each group's sum of o² after the scales (prg_hs),
// held to its bound too.
func checkMix(ref mixOut, s []float32, tail []byte, four bool) error {
	for i, want := range ref.s {
		if r := ratio(float64(s[i])-want, ref.bs[i]); r > 1 {
			return fmt.Errorf("state %d (head %d, row %d): %g, want %g (%.2f times its bound)", i, i/(mixD*mixD), i/mixD%mixD, s[i], want, r)
		}
	}
	n := mixHeads * mixD
	y, by := ref.y, ref.by
	if four {
		y, by = ref.w, ref.bw
	}
	d := unsafe.Slice((*float32)(unsafe.Pointer(&tail[n])), n/32)
	o2 := unsafe.Slice((*float32)(unsafe.Pointer(&tail[n+4*(n/32)])), n/32)
	for g := range n / 32 {
		var m, bm float64
		for c := 32 * g; c < 32*g+32; c++ {
			m = max(m, math.Abs(y[c]))
			bm = max(bm, by[c])
		}
		dg := float64(d[g])
		if r := ratio(dg-m/127, bm/127+2*dg/(1<<24)); r > 1 {
			return fmt.Errorf("output group %d: scale %g, want %g (%.2f times its bound)", g, dg, m/127, r)
		}
		for c := 32 * g; c < 32*g+32; c++ {
			if r := ratio(float64(int8(tail[c]))*dg-y[c], dg*(0.5+tieSlack)+by[c]); r > 1 {
				return fmt.Errorf("output %d: int8 %d × %g, want %g (%.2f times its bound)", c, int8(tail[c]), dg, y[c], r)
			}
		}
		if four {
			if r := ratio(float64(o2[g])-ref.o2[g], ref.bo2[g]); r > 1 {
				return fmt.Errorf("output group %d: sum of o² %g, want %g (%.2f times its bound)", g, o2[g], ref.o2[g], r)
			}
		}
	}
	return nil
}

// mixScales is what prm_stage_out multiplies each group's scale by: its
// head's 1/rms from the groups' sums of o² in tail (prm_mix4's), in
// float64.
func mixScales(tail []byte) []float64 {
	n := mixHeads * mixD
	o2 := unsafe.Slice((*float32)(unsafe.Pointer(&tail[n+4*(n/32)])), n/32)
	per := mixD / 32
	f := make([]float64, n/32)
	for g := range f {
		var ss float64
		for _, v := range o2[g/per*per:][:per] {
			ss += float64(v)
		}
		f[g] = 1 / math.Sqrt(ss/mixD+1e-6)
	}
	return f
}

// checkOutQ is the projection's check from its input as the mixer stored
// it: y = x0 + W (q·d·f) in float64 against got, f each group's factor
// (nil: 1), within rel of the sum of the terms' magnitudes (checkX's
// bound); the worst ratio.
func checkOutQ(w *weights, x0 []float32, tail []byte, f []float64, got []float32) float64 {
	n := w.s.cols
	d := unsafe.Slice((*float32)(unsafe.Pointer(&tail[n])), n/32)
	x := make([]float64, n)
	for c := range x {
		x[c] = float64(int8(tail[c])) * float64(d[c/32])
		if f != nil {
			x[c] *= f[c/32]
		}
	}
	worst := 0.0
	for i := range w.s.rows {
		y, m := float64(x0[i]), math.Abs(float64(x0[i]))
		for c := range n {
			p := w.at(i, c) * x[c]
			y += p
			m += math.Abs(p)
		}
		worst = max(worst, ratio(float64(got[i])-y, rel*m))
	}
	return worst
}

// mixSetup is what runMix takes from runLayer: its chain's phases and
// buffers, the projection's matrix, and the 3-phase run's h and x1 (as
// pring_hx_brl left them) with x2's and h's initial contents.
type mixSetup struct {
	wo                 *weights
	gu, dn, out        phase
	dx1, dx2, dh, dbar cuda.DevPtr
	xInit, hNaN        []float32
	h3, x13            []float32
}

// runMix checks and times pring_hx_brm, pring_hx_brm4, pring_hx_brm4s and
// pring_hx_brm4n (step 92): the
// layer's chain with the mixer between its down phase and its projection,
// [gate|up, down, mixer, projection] × ⌊n/4⌋, each layer's mixer on its
// own state (2 MiB), the projection reading the mixer's int8 output, and
// traces it. (runLayer times pring_hx_brm on its chain without mixers:
// what the template costs the other phases.)
func runMix(r layerRun, ms mixSetup, n int) error {
	e, mem := r.e, r.mem
	layers := n / 4
	nx := outShape.cols
	if nx != mixHeads*mixD {
		return fmt.Errorf("mixer: %d V channels, the projection takes %d", mixHeads*mixD, nx)
	}
	oNaN := slices.Concat(slices.Repeat([]float32{nanF32}, nx), nanTail(nx))
	dO, err := mem.alloc(uint64(4 * len(oNaN)))
	if err != nil {
		return err
	}
	in := randomMix(21)
	buf := in.device()
	dmix := make([]cuda.DevPtr, layers)
	for l := range dmix {
		if dmix[l], err = mem.upload(buf); err != nil {
			return err
		}
	}
	out := ms.out
	out.x = uint64(dO)
	chain := make([]phase, 4*layers)
	for i := range chain {
		mix := phase{w: uint64(dmix[i/4]), x: uint64(ms.dx1), y: uint64(dO), norm: ms.gu.norm, cols: int32(nx), kind: kindMix}
		chain[i] = []phase{ms.gu, ms.dn, mix, out}[i%4]
	}
	_, dchain, err := mem.chain(len(chain))
	if err != nil {
		return err
	}
	if err := e.CopyHtoD(dchain, unsafe.Slice((*byte)(unsafe.Pointer(&chain[0])), len(chain)*int(unsafe.Sizeof(phase{})))); err != nil {
		return err
	}
	launch := func(k deepKernel, ph cuda.DevPtr, phases, flags int) error {
		return launchChain(e, k.fn, k.blocks, k.threads(), r.shared, ph, phases, ms.dbar, flags, int32(2), int32(ringSlot))
	}
	var weightBytes float64
	for _, p := range chain[:4] {
		weightBytes += p.bytes()
	}
	stateBytes := 2 * float64(len(in.s)*4) // read and written
	// One layer from the buffers' first contents: h, x1, x2, the first
	// mixer's state and the projection's input as they stand after it.
	type got struct {
		h, x1, x2, s []float32
		tail         []byte
	}
	var four *got // pring_hx_brm4's, which pring_hx_brm4s and _brm4n must match bit for bit
	for _, f := range []struct {
		k, tr deepKernel
		name  string
		four  bool
	}{{r.brm, r.brmTrace, "pring_hx_brm/x8", false}, {r.brm4, r.brm4Trace, "pring_hx_brm4/x8", true}, {r.brm4s, r.brm4sTrace, "pring_hx_brm4s/x8", true},
		{r.brm4n, r.brm4nTrace, "pring_hx_brm4n/x8", true}} {
		once := func() (g got, err error) {
			for _, c := range []struct {
				p cuda.DevPtr
				b []byte
			}{{ms.dx1, cuda.AsBytes(ms.xInit)}, {ms.dx2, cuda.AsBytes(ms.xInit)}, {ms.dh, cuda.AsBytes(ms.hNaN)}, {dO, cuda.AsBytes(oNaN)}, {dmix[0], buf}} {
				if err := e.CopyHtoD(c.p, c.b); err != nil {
					return g, err
				}
			}
			if err := launch(f.k, dchain, 4, 0); err != nil {
				return g, err
			}
			g = got{make([]float32, len(ms.hNaN)), make([]float32, len(ms.xInit)), make([]float32, len(ms.xInit)), make([]float32, len(in.s)), nil}
			o := make([]float32, len(oNaN))
			for _, c := range []struct {
				dst []float32
				src cuda.DevPtr
			}{{g.h, ms.dh}, {g.x1, ms.dx1}, {g.x2, ms.dx2}, {g.s, dmix[0]}, {o, dO}} {
				if err := e.CopyDtoH(cuda.AsBytes(c.dst), c.src); err != nil {
					return g, err
				}
			}
			g.h, g.x1, g.x2, g.tail = g.h[:len(ms.h3)], g.x1[:nx], g.x2[:nx], cuda.AsBytes(o[nx:])
			return g, nil
		}
		g, err := once()
		if err != nil {
			return err
		}
		if !slices.Equal(bitsOf(g.h), bitsOf(ms.h3)) || !slices.Equal(bitsOf(g.x1), bitsOf(ms.x13)) {
			return fmt.Errorf("%s: the layer's gate|up and down differ from pring_hx_brl's", f.name)
		}
		if err := checkMix(mixRef(in, g.x1), g.s, g.tail, f.four); err != nil {
			return fmt.Errorf("%s: the mixer: %w", f.name, err)
		}
		var scales []float64
		if f.four {
			scales = mixScales(g.tail)
		}
		if worst := checkOutQ(ms.wo, ms.xInit[:nx], g.tail, scales, g.x2); worst > 1 {
			return fmt.Errorf("%s: the projection from the mixer's int8: error %.2f times its bound", f.name, worst)
		}
		g2, err := once()
		if err != nil {
			return err
		}
		if !slices.Equal(bitsOf(g2.s), bitsOf(g.s)) || !slices.Equal(bitsOf(g2.x2), bitsOf(g.x2)) || !slices.Equal(g2.tail, g.tail) {
			return fmt.Errorf("%s: a second run of the same layer differs from the first", f.name)
		}
		if f.name == "pring_hx_brm4/x8" {
			four = &g
		} else if f.four {
			if four == nil || !slices.Equal(bitsOf(g.s), bitsOf(four.s)) || !slices.Equal(bitsOf(g.x2), bitsOf(four.x2)) || !slices.Equal(g.tail, four.tail) {
				return fmt.Errorf("%s: the layer differs from pring_hx_brm4's", f.name)
			}
			fmt.Printf("check %s: a layer with its mixer bit-identical to pring_hx_brm4's (ok)\n", f.name)
		}
		fmt.Printf("check %s: a layer with its mixer (gate|up, down, gated delta rule of 32 heads, projection from its int8) against float64, twice bit for bit (ok)\n", f.name)

		for _, sf := range []int{0, streamNoStage, streamNoDot, streamNoStage | streamNoDot} {
			t, err := evtime.PerCall(e, 3, 5, 5, func(int) error { return launch(f.k, dchain, len(chain), sf) })
			if err != nil {
				return err
			}
			per := t / float64(layers)
			fmt.Printf("layer chain %-16s 9B q8_0 slots 2 blocks %4d stage %-5v dot %-5v %7.3f µs/layer (%d layers, with mixers)  %5.2f TB/s of weights and states\n",
				f.name, f.k.blocks, sf&streamNoStage == 0, sf&streamNoDot == 0, per*1e6, layers, (weightBytes+stateBytes)/per/1e12)
		}
		if err := traceRing(e, mem, func(dtr cuda.DevPtr) error {
			return launchChain(e, f.tr.fn, f.tr.blocks, f.tr.threads(), r.shared, dchain, len(chain), ms.dbar, 0, int32(2), int32(ringSlot), dtr)
		}, f.name+" mixed", len(chain), f.k.blocks, 2, chain); err != nil {
			return err
		}
	}
	return nil
}

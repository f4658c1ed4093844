package gpu

// Pure-Go references and comparison helpers for the kernel tests of
// kernels_gpu_test.go. Everything here runs without a GPU; the Test* functions
// in this file check the references themselves against engine/cpu, so the GPU
// tests compare with an oracle that is itself tested.
//
// Names start with kt ("kernel test") to stay clear of the package's other
// test files.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/memra-ai/memra/engine/cpu"
	"github.com/memra-ai/memra/engine/sample"
	"github.com/memra-ai/memra/kernels"
)

// ktU is the unit roundoff of f32 (half an ulp of 1): every correctly rounded
// f32 operation has relative error at most ktU, and a sum of n terms in any
// order has error at most about n·ktU·Σ|terms| (Higham's γ_n).
const ktU = 0x1p-24

// ktNaN is the quiet-NaN bit pattern the tests poison outputs with before a
// launch, so an element a kernel fails to write shows up as NaN.
const ktNaN uint32 = 0x7fc00000

// ktRand returns the generator of one test case (seeded: failures reproduce).
func ktRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x6d656d7261)) }

// ktUniform returns n values drawn from U(lo, hi).
func ktUniform(r *rand.Rand, n int, lo, hi float32) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = lo + (hi-lo)*r.Float32()
	}
	return x
}

// ktF64 widens x.
func ktF64(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// ktMaxAbs returns max |x|.
func ktMaxAbs(x []float64) float64 {
	m := 0.0
	for _, v := range x {
		m = math.Max(m, math.Abs(v))
	}
	return m
}

// ktDiff returns max |got−want| and where it is; a NaN or infinity in got
// where want is finite counts as +Inf (math.Max would let a NaN through).
func ktDiff(got []float32, want []float64) (float64, int) {
	worst, at := 0.0, -1
	for i, w := range want {
		d := math.Abs(float64(got[i]) - w)
		if math.IsNaN(d) || math.IsInf(d, 0) {
			d = math.Inf(1)
		}
		if d > worst || at < 0 {
			worst, at = d, i
		}
	}
	return worst, at
}

// ktRelErr is max|got−want| / max|want| (+Inf for a NaN in got).
func ktRelErr(got []float32, want []float64) (float64, int) {
	d, at := ktDiff(got, want)
	m := ktMaxAbs(want)
	if m == 0 {
		return d, at
	}
	return d / m, at
}

// ktCheckRel fails t when max|got−want|/max|want| exceeds tol and returns the
// error for logging.
func ktCheckRel(t *testing.T, what string, got []float32, want []float64, tol float64) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	e, at := ktRelErr(got, want)
	if !(e <= tol) {
		t.Errorf("%s: max|gpu−ref|/max|ref| = %.3g > %.3g (worst at %d: gpu %v, ref %v)", what, e, tol, at, got[at], want[at])
	}
	return e
}

// ktCheckElems fails t for every element (up to a few) where |got−want| > tol(i).
func ktCheckElems(t *testing.T, what string, got []float32, want []float64, tol func(i int) float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i, w := range want {
		d := math.Abs(float64(got[i]) - w)
		if !(d <= tol(i)) {
			if bad < 5 {
				t.Errorf("%s[%d]: gpu %v, ref %v: |diff| %.3g > %.3g", what, i, got[i], w, d, tol(i))
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d elements out of tolerance in all", what, bad)
	}
}

// ktCheckBits fails t unless got and want are bit-identical.
func ktCheckBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	bad := 0
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			if bad < 5 {
				t.Errorf("%s[%d]: gpu %v (%#08x), want %v (%#08x)", what, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
			}
			bad++
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d elements differ in all", what, bad)
	}
}

// ktCheckBytes fails t unless got and want hold the same bytes, saying how
// many differ.
func ktCheckBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d bytes, want %d", what, len(got), len(want))
	}
	diff := 0
	for i := range got {
		if got[i] != want[i] {
			diff++
		}
	}
	if diff > 0 {
		t.Errorf("%s: %d of %d bytes differ", what, diff, len(got))
	}
}

// ktCheckPoison fails t unless every element of x still holds the poison bits:
// the guard regions a kernel must not write.
func ktCheckPoison(t *testing.T, what string, x []float32, bits uint32) {
	t.Helper()
	for i, v := range x {
		if math.Float32bits(v) != bits {
			t.Errorf("%s: element %d written (%#08x), must stay %#08x", what, i, math.Float32bits(v), bits)
			return
		}
	}
}

// ktFP8Row encodes one k or v vector x as kv_store_fp8 does (kv_store.cu):
// amax = max|x_i|, codes = e4m3(x_i · 448/amax), scale = amax/448, and writes
// the values attention reads back, decode(code)·scale in f32. Every step is
// one correctly rounded f32 operation, so this equals the kernel bit for bit.
func ktFP8Row(x []float32, codes []uint8, deq []float32) (scale float32) {
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	scale, inv := kernels.KVScaleFP8(amax)
	for i, v := range x {
		codes[i] = kernels.E4M3FromFloat32(v * inv)
		deq[i] = kernels.E4M3ToFloat32(codes[i]) * scale
	}
	return scale
}

// ktAttnRef is float64 softmax attention of every q head over keys [0, t) of
// one layer's cache: the reference for attn_split_* followed by attn_combine.
type ktAttnRef struct {
	t, nHead, dh int
	out          []float64 // [nHead][dh]: Σ_j softmax_j · v_j
	scores       []float64 // [nHead][t]: scale·(q·k_j)
	sabs         []float64 // [nHead]: max_j scale·Σ_i |q_i k_ji|, which bounds a score's f32 error
}

// ktAttention computes the reference. q: [nHead][dh]; kc, vc: the cache as
// f32 values (already dequantised), [nKV][capacity][dh]; q head h reads KV
// head h/(nHead/nKV). Heads run in parallel.
func ktAttention(q, kc, vc []float32, nHead, nKV, capacity, dh, t int, scale float32) *ktAttnRef {
	r := &ktAttnRef{t: t, nHead: nHead, dh: dh,
		out: make([]float64, nHead*dh), scores: make([]float64, nHead*t), sabs: make([]float64, nHead)}
	group := nHead / nKV
	sc := float64(scale)
	var wg sync.WaitGroup
	for h := range nHead {
		wg.Go(func() {
			g := h / group
			qh := q[h*dh : (h+1)*dh]
			s := r.scores[h*t : (h+1)*t]
			mx := math.Inf(-1)
			for j := range t {
				k := kc[(g*capacity+j)*dh : (g*capacity+j+1)*dh]
				var dot, abs float64
				for i, qi := range qh {
					p := float64(qi) * float64(k[i])
					dot += p
					abs += math.Abs(p)
				}
				s[j] = dot * sc
				r.sabs[h] = math.Max(r.sabs[h], abs*sc)
				mx = math.Max(mx, s[j])
			}
			o := r.out[h*dh : (h+1)*dh]
			var l float64
			for j := range t {
				p := math.Exp(s[j] - mx)
				l += p
				v := vc[(g*capacity+j)*dh : (g*capacity+j+1)*dh]
				for d := range o {
					o[d] += p * float64(v[d])
				}
			}
			for d := range o {
				o[d] /= l
			}
		})
	}
	wg.Wait()
	return r
}

// checkSplits checks the per-split partials of attn_split against the
// reference: split s covers keys [s·chunk, min((s+1)·chunk, t)), chunk =
// ceil(t/ns) (attention.cu). An empty split must hold exactly {−inf, 0} and a
// zero accumulator (acc, [nHead][ns][dh], may be nil to skip that part); a
// non-empty one the max of its scores and Σ exp(score − max).
//
// Tolerances: a score is an f32 dot of dh products then ·scale, error at most
// (dh+16)·u·scale·Σ|q_i k_i| (γ bound, lane slices + butterfly + scale); the
// sum l multiplies each term by up to one rescale factor per key of its
// sub-group (ex2, 2 ulp each) and adds cnt terms: (4·cnt+32)·u relative,
// plus twice the score bound through exp.
func (r *ktAttnRef) checkSplits(ms, acc []float32, ns int) error {
	t, dh := r.t, r.dh
	chunk := (t + ns - 1) / ns
	for h := range r.nHead {
		tolS := float64(dh+16) * ktU * r.sabs[h]
		for s := range ns {
			m, l := float64(ms[(h*ns+s)*2]), float64(ms[(h*ns+s)*2+1])
			k0, k1 := s*chunk, min((s+1)*chunk, t)
			if k0 >= t {
				if !math.IsInf(m, -1) || l != 0 {
					return fmt.Errorf("head %d split %d (empty: keys from %d, t_kv %d): {max, sum} = {%v, %v}, want {-Inf, 0}", h, s, k0, t, m, l)
				}
				if acc != nil {
					for d, a := range acc[(h*ns+s)*dh : (h*ns+s+1)*dh] {
						if a != 0 {
							return fmt.Errorf("head %d split %d (empty): acc[%d] = %v, want 0", h, s, d, a)
						}
					}
				}
				continue
			}
			sc := r.scores[h*t+k0 : h*t+k1]
			mref := math.Inf(-1)
			for _, x := range sc {
				mref = math.Max(mref, x)
			}
			var lref float64
			for _, x := range sc {
				lref += math.Exp(x - mref)
			}
			if d := math.Abs(m - mref); !(d <= tolS) {
				return fmt.Errorf("head %d split %d (keys %d..%d): max score %v, ref %v (|diff| %.3g > %.3g)", h, s, k0, k1, m, mref, d, tolS)
			}
			tolL := lref * (2*tolS + float64(4*(k1-k0)+32)*ktU)
			if d := math.Abs(l - lref); !(d <= tolL) {
				return fmt.Errorf("head %d split %d (keys %d..%d): sum %v, ref %v (|diff| %.3g > %.3g)", h, s, k0, k1, l, lref, d, tolL)
			}
		}
	}
	return nil
}

// ktCombine merges split partials in float64 as attn_combine does:
// M = max_s m_s, f_s = exp(m_s − M) (0 for an empty split), out = Σ f_s·acc_s
// / Σ f_s·l_s (0 when every split is empty), times sigmoid(gate[h·gateStride
// + d]) when gate is not nil. ms: [nHead][ns][2]; acc: [nHead][ns][dh].
// bound[i] = Σ_s f_s·|acc_s| / L (times the gate) scales the f32 error of
// out[i].
func ktCombine(ms, acc, gate []float32, nHead, dh, ns, gateStride int) (out, bound []float64) {
	out, bound = make([]float64, nHead*dh), make([]float64, nHead*dh)
	f := make([]float64, ns)
	for h := range nHead {
		M := math.Inf(-1)
		for s := range ns {
			M = math.Max(M, float64(ms[(h*ns+s)*2]))
		}
		var L float64
		for s := range ns {
			m := float64(ms[(h*ns+s)*2])
			f[s] = 0
			if !math.IsInf(m, -1) {
				f[s] = math.Exp(m - M)
			}
			L += f[s] * float64(ms[(h*ns+s)*2+1])
		}
		for d := range dh {
			var a, b float64
			for s := range ns {
				x := float64(acc[(h*ns+s)*dh+d])
				a += f[s] * x
				b += f[s] * math.Abs(x)
			}
			if L > 0 {
				a, b = a/L, b/L
			} else {
				a, b = 0, 0
			}
			if gate != nil {
				g := 1 / (1 + math.Exp(-float64(gate[h*gateStride+d])))
				a, b = a*g, b*g
			}
			out[h*dh+d], bound[h*dh+d] = a, b
		}
	}
	return out, bound
}

// ktArgmaxChunk is argmax_partial's result for one chunk: the largest
// non-NaN value and its lowest index, or (−inf, 0x7fffffff) when every value
// is NaN (argmax.cu starts from that pair and a NaN never wins).
func ktArgmaxChunk(x []float32, base int) (float32, int32) {
	bv, bi := float32(math.Inf(-1)), int32(math.MaxInt32)
	for i, v := range x {
		if v > bv || (v == bv && int32(base+i) < bi) {
			bv, bi = v, int32(base+i)
		}
	}
	return bv, bi
}

// TestKernelRefAttentionMatchesCPU checks the float64 attention reference
// against engine/cpu's Attention (the CPU backend's own), after moving the
// cache from the GPU layout [n_kv][capacity][dh] to the CPU's [t][n_kv·dh].
// Tolerance: cpu.Attention sums each score over dh products and each output
// over t keys in f32, so |diff| ≤ (t+dh+16)·2u·max|v| (γ bounds, |v| ≤ 1).
func TestKernelRefAttentionMatchesCPU(t *testing.T) {
	const nHead, nKV, dh, capy, tkv = 6, 2, 64, 300, 257
	r := ktRand(101)
	q := ktUniform(r, nHead*dh, -2, 2)
	kc := ktUniform(r, nKV*capy*dh, -1, 1)
	vc := ktUniform(r, nKV*capy*dh, -1, 1)
	scale := float32(1 / math.Sqrt(dh))
	ref := ktAttention(q, kc, vc, nHead, nKV, capy, dh, tkv, scale)

	keys, vals := make([]float32, tkv*nKV*dh), make([]float32, tkv*nKV*dh)
	for g := range nKV {
		for j := range tkv {
			copy(keys[(j*nKV+g)*dh:(j*nKV+g+1)*dh], kc[(g*capy+j)*dh:])
			copy(vals[(j*nKV+g)*dh:(j*nKV+g+1)*dh], vc[(g*capy+j)*dh:])
		}
	}
	out := make([]float32, nHead*dh)
	cpu.Attention(nil, out, q, keys, vals, tkv, nHead, nKV, dh, scale, make([]float32, nHead*tkv))
	tol := float64(tkv+dh+16) * 2 * ktU
	if d, at := ktDiff(out, ref.out); !(d <= tol) {
		t.Fatalf("cpu.Attention vs float64 reference: max|diff| %.3g > %.3g at %d", d, tol, at)
	}
}

// TestKernelRefCombineMatchesAttention splits the keys as attn_split does,
// computes each split's partial (max, sum, acc) in float64, merges them with
// ktCombine and expects the unsplit reference: it checks ktCombine and the
// split arithmetic the GPU test relies on, including empty splits
// (ns > t). Tolerance 1e-6 absolute (|out| ≤ 1): the partials are rounded
// to f32, about 6e-8 relative each; the rest is float64.
func TestKernelRefCombineMatchesAttention(t *testing.T) {
	const nHead, nKV, dh, capy = 4, 2, 64, 100
	r := ktRand(102)
	q := ktUniform(r, nHead*dh, -2, 2)
	kc := ktUniform(r, nKV*capy*dh, -1, 1)
	vc := ktUniform(r, nKV*capy*dh, -1, 1)
	scale := float32(1 / math.Sqrt(dh))
	for _, tc := range []struct{ t, ns int }{{1, 1}, {1, 3}, {5, 4}, {63, 2}, {64, 1}, {65, 2}, {97, 7}} {
		ref := ktAttention(q, kc, vc, nHead, nKV, capy, dh, tc.t, scale)
		chunk := (tc.t + tc.ns - 1) / tc.ns
		ms := make([]float32, nHead*tc.ns*2)
		acc := make([]float32, nHead*tc.ns*dh)
		for h := range nHead {
			g := h / (nHead / nKV)
			for s := range tc.ns {
				k0, k1 := s*chunk, min((s+1)*chunk, tc.t)
				m, l := math.Inf(-1), 0.0
				a := make([]float64, dh)
				for j := k0; j < k1; j++ {
					m = math.Max(m, ref.scores[h*tc.t+j])
				}
				for j := k0; j < k1; j++ {
					p := math.Exp(ref.scores[h*tc.t+j] - m)
					l += p
					for d := range dh {
						a[d] += p * float64(vc[(g*capy+j)*dh+d])
					}
				}
				ms[(h*tc.ns+s)*2], ms[(h*tc.ns+s)*2+1] = float32(m), float32(l)
				for d := range dh {
					acc[(h*tc.ns+s)*dh+d] = float32(a[d])
				}
			}
		}
		if err := ref.checkSplits(ms, acc, tc.ns); err != nil {
			t.Errorf("t %d ns %d: float64 partials fail checkSplits: %v", tc.t, tc.ns, err)
		}
		// The partials were rounded to f32: compare at f32 precision.
		out, _ := ktCombine(ms, acc, nil, nHead, dh, tc.ns, 0)
		for i := range out {
			if d := math.Abs(out[i] - ref.out[i]); !(d <= 1e-6) { // NaN fails
				t.Fatalf("t %d ns %d: combined %v, unsplit %v", tc.t, tc.ns, out[i], ref.out[i])
			}
		}
	}
}

// TestKernelRefFP8Row checks the fp8 row encoder the attention and KV tests
// use: every decoded value within 1/16 relative of its input (e4m3 keeps 3
// mantissa bits: round to nearest is within 2^-4 of |x|), up to the
// subnormal step amax/448·2^-9, and a zero row encodes to zero scale and codes.
func TestKernelRefFP8Row(t *testing.T) {
	r := ktRand(103)
	x := ktUniform(r, 256, -3, 3)
	codes, deq := make([]uint8, 256), make([]float32, 256)
	scale := ktFP8Row(x, codes, deq)
	for i, v := range x {
		if d := math.Abs(float64(deq[i] - v)); !(d <= math.Abs(float64(v))/16+float64(scale)*0x1p-9) { // NaN fails
			t.Fatalf("x[%d] = %v decodes to %v", i, v, deq[i])
		}
	}
	zero := make([]float32, 64)
	if s := ktFP8Row(zero, codes[:64], deq[:64]); s != 0 || codes[0] != 0 || deq[0] != 0 {
		t.Fatalf("zero row: scale %v code %#x value %v", s, codes[0], deq[0])
	}
}

// ktTopK is sample.TopK, the host order the GPU's top-k must reproduce
// (tested against a stable sort in engine/sample), with the values: the
// first k ids of x and their logits.
func ktTopK(x []float32, k int) ([]int32, []float32) {
	ids := sample.TopK(x, k)
	vals := make([]float32, len(ids))
	for i, id := range ids {
		vals[i] = x[id]
	}
	return ids, vals
}

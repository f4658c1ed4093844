package cpu_test

// An independent, deliberately plain float64 forward pass written from
// transformers' modeling_qwen3_5.py / modeling_qwen3.py (not from the
// backend): whole-history convolution instead of a rolling state, the
// recurrent state in transformers' [k][v] layout, RoPE in the rotate_half
// form with duplicated frequencies, repeat_kv for GQA. Weights are
// dequantised once with gguf.Dequantize, so it shares nothing with the
// backend's fused kernels either.

import (
	"math"
	"testing"

	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/gguf"
)

type refModel struct {
	m   *model.Model
	w   map[*model.Tensor][]float64
	pos int
	// per layer
	keys, vals [][][]float64 // [layer][pos][n_kv·Dh]
	history    [][][]float64 // [layer][pos][C]: every qkv input seen (conv window source)
	state      [][][]float64 // [layer][H_v][Sk·Sv], element [i·Sv+j] = S[k=i][v=j]
}

func newRef(t *testing.T, m *model.Model) *refModel {
	t.Helper()
	r := &refModel{m: m, w: map[*model.Tensor][]float64{}}
	for _, tn := range m.Tensors() {
		f := make([]float32, tn.Rows()*tn.Cols())
		if err := gguf.Dequantize(tn.Type, tn.Data, f); err != nil {
			t.Fatalf("dequantize %s: %v", tn.Name, err)
		}
		d := make([]float64, len(f))
		for i, v := range f {
			d[i] = float64(v)
		}
		r.w[tn] = d
	}
	n := m.NLayer
	r.keys, r.vals = make([][][]float64, n), make([][][]float64, n)
	r.history, r.state = make([][][]float64, n), make([][][]float64, n)
	for l := range n {
		if m.Kinds[l] == model.LayerRecurrent {
			r.state[l] = make([][]float64, m.SSMNumVHeads)
			for h := range r.state[l] {
				r.state[l][h] = make([]float64, m.SSMStateSize*m.SSMHeadDimV)
			}
		}
	}
	return r
}

func (r *refModel) linear(w *model.Tensor, x []float64) []float64 {
	W := r.w[w]
	cols, rows := w.Shape[0], w.Rows()
	y := make([]float64, rows)
	for o := range rows {
		s := 0.0
		for c := range cols {
			s += W[o*cols+c] * x[c]
		}
		y[o] = s
	}
	return y
}

func refRMS(x, w []float64, eps float64) []float64 {
	ms := 0.0
	for _, v := range x {
		ms += v * v
	}
	ms /= float64(len(x))
	y := make([]float64, len(x))
	for i := range x {
		y[i] = x[i] / math.Sqrt(ms+eps) * w[i]
	}
	return y
}

func silu(x float64) float64    { return x / (1 + math.Exp(-x)) }
func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// step feeds one token and returns the logits.
func (r *refModel) step(tok int) []float64 {
	m := r.m
	eps := float64(m.NormEps)
	E := r.w[m.TokenEmbd]
	x := append([]float64(nil), E[tok*m.NEmbd:(tok+1)*m.NEmbd]...)
	for l := range m.NLayer {
		L := &m.Layers[l]
		h := refRMS(x, r.w[L.AttnNorm], eps)
		var mix []float64
		if L.Kind == model.LayerAttention {
			mix = r.attn(l, L, h)
		} else {
			mix = r.gdn(l, L, h)
		}
		for i := range x {
			x[i] += mix[i]
		}
		h = refRMS(x, r.w[L.FFNNorm], eps)
		g, u := r.linear(L.FFNGate, h), r.linear(L.FFNUp, h)
		for i := range g {
			g[i] = silu(g[i]) * u[i]
		}
		d := r.linear(L.FFNDown, g)
		for i := range x {
			x[i] += d[i]
		}
	}
	r.pos++
	return r.linear(m.Output, refRMS(x, r.w[m.OutputNorm], eps))
}

func (r *refModel) attn(l int, L *model.Layer, h []float64) []float64 {
	m := r.m
	eps := float64(m.NormEps)
	dh, nh, nkv := m.HeadDimK, m.NHead, m.NHeadKV
	qFull := r.linear(L.AttnQ, h)
	kAll, vAll := r.linear(L.AttnK, h), r.linear(L.AttnV, h)
	q := make([][]float64, nh)
	gate := make([][]float64, nh)
	for i := range nh {
		if m.AttnOutputGate { // view(..., heads, 2·Dh) then chunk(2): q first, gate second
			q[i] = qFull[i*2*dh : i*2*dh+dh]
			gate[i] = qFull[i*2*dh+dh : (i+1)*2*dh]
		} else {
			q[i] = qFull[i*dh : (i+1)*dh]
		}
		q[i] = refRotate(refRMS(q[i], r.w[L.AttnQNorm], eps), r.pos, m.NRot, float64(m.RopeBase))
	}
	kRow := make([]float64, 0, nkv*dh)
	for j := range nkv {
		k := refRMS(kAll[j*dh:(j+1)*dh], r.w[L.AttnKNorm], eps)
		kRow = append(kRow, refRotate(k, r.pos, m.NRot, float64(m.RopeBase))...)
	}
	r.keys[l] = append(r.keys[l], kRow)
	r.vals[l] = append(r.vals[l], vAll)
	out := make([]float64, 0, nh*dh)
	for i := range nh {
		kvh := i / (nh / nkv) // repeat_kv
		T := len(r.keys[l])
		sc := make([]float64, T)
		mx := math.Inf(-1)
		for t := range T {
			s := 0.0
			for d := range dh {
				s += q[i][d] * r.keys[l][t][kvh*dh+d]
			}
			sc[t] = s / math.Sqrt(float64(dh))
			mx = math.Max(mx, sc[t])
		}
		den := 0.0
		for t := range sc {
			sc[t] = math.Exp(sc[t] - mx)
			den += sc[t]
		}
		o := make([]float64, dh)
		for t := range T {
			for d := range dh {
				o[d] += sc[t] / den * r.vals[l][t][kvh*dh+d]
			}
		}
		if m.AttnOutputGate {
			for d := range o {
				o[d] *= sigmoid(gate[i][d])
			}
		}
		out = append(out, o...)
	}
	return r.linear(L.AttnOutput, out)
}

// refRotate applies transformers' apply_rotary_pos_emb to the first nRot
// dims: x·cos + rotate_half(x)·sin with cos/sin = cat(freqs, freqs).
func refRotate(x []float64, pos, nRot int, base float64) []float64 {
	half := nRot / 2
	cos := make([]float64, nRot)
	sin := make([]float64, nRot)
	for i := range half {
		inv := 1 / math.Pow(base, float64(2*i)/float64(nRot))
		cos[i], cos[i+half] = math.Cos(float64(pos)*inv), math.Cos(float64(pos)*inv)
		sin[i], sin[i+half] = math.Sin(float64(pos)*inv), math.Sin(float64(pos)*inv)
	}
	rot := make([]float64, nRot) // rotate_half: cat(-x2, x1)
	for i := range half {
		rot[i] = -x[i+half]
		rot[i+half] = x[i]
	}
	y := append([]float64(nil), x...)
	for i := range nRot {
		y[i] = x[i]*cos[i] + rot[i]*sin[i]
	}
	return y
}

func (r *refModel) gdn(l int, L *model.Layer, h []float64) []float64 {
	m := r.m
	S, Sv, Hk, Hv := m.SSMStateSize, m.SSMHeadDimV, m.SSMGroupCount, m.SSMNumVHeads
	K := Hk * S
	C := 2*K + Hv*Sv
	kern := m.SSMConvKernel
	mixed := r.linear(L.AttnQKV, h)
	z := r.linear(L.AttnGate, h)
	b := r.linear(L.SSMBeta, h)
	a := r.linear(L.SSMAlpha, h)
	r.history[l] = append(r.history[l], mixed)
	// Depthwise causal conv over the whole history, zero-padded on the left.
	cw := r.w[L.SSMConv]
	conv := make([]float64, C)
	T := len(r.history[l])
	for c := range C {
		s := 0.0
		for j := range kern { // tap j multiplies input t−(kern−1−j)
			t := T - 1 - (kern - 1 - j)
			if t >= 0 {
				s += cw[c*kern+j] * r.history[l][t][c]
			}
		}
		conv[c] = silu(s)
	}
	l2 := func(v []float64) []float64 {
		ss := 0.0
		for _, e := range v {
			ss += e * e
		}
		o := make([]float64, len(v))
		for i := range v {
			o[i] = v[i] / math.Sqrt(ss+1e-6)
		}
		return o
	}
	dt, A, nw := r.w[L.SSMDt], r.w[L.SSMA], r.w[L.SSMNorm]
	core := make([]float64, 0, Hv*Sv)
	for hv := range Hv {
		hk := hv % Hk // qwen35 GGUF: V heads tiled over K heads
		q := l2(conv[hk*S : (hk+1)*S])
		for i := range q {
			q[i] /= math.Sqrt(float64(S))
		}
		k := l2(conv[K+hk*S : K+(hk+1)*S])
		v := conv[2*K+hv*Sv : 2*K+(hv+1)*Sv]
		beta := sigmoid(b[hv])
		sp := a[hv] + dt[hv]
		if sp <= 20 {
			sp = math.Log1p(math.Exp(sp))
		}
		g := A[hv] * sp
		st := r.state[l][hv] // [i·Sv + j] = S[k i][v j]
		for i := range st {
			st[i] *= math.Exp(g)
		}
		o := make([]float64, Sv)
		for j := range Sv {
			mem := 0.0
			for i := range S {
				mem += st[i*Sv+j] * k[i]
			}
			delta := (v[j] - mem) * beta
			for i := range S {
				st[i*Sv+j] += k[i] * delta
			}
		}
		for j := range Sv {
			for i := range S {
				o[j] += st[i*Sv+j] * q[i]
			}
		}
		// Qwen3_5RMSNormGated: weight · rmsnorm(o) · silu(z)
		on := refRMS(o, nw, float64(m.NormEps))
		for j := range on {
			on[j] *= silu(z[hv*Sv+j])
		}
		core = append(core, on...)
	}
	return r.linear(L.SSMOut, core)
}

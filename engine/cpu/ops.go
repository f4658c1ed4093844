package cpu

import (
	"math"
)

// The building blocks of one decode step. Each is the CPU reference for a GPU
// kernel: plain loops, f32 storage, small reductions accumulated in float64
// so that the reference is at least as accurate as any kernel it checks.
// Shapes are given as [outer][inner], row-major, all f32.

// SiLU returns x·sigmoid(x).
func SiLU(x float32) float32 { return x / (1 + float32(math.Exp(float64(-x)))) }

// Sigmoid returns 1/(1+e^-x).
func Sigmoid(x float32) float32 { return 1 / (1 + float32(math.Exp(float64(-x)))) }

// Softplus returns log(1+e^x), and x itself above 20 as torch's
// F.softplus (beta 1, threshold 20) does.
func Softplus(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log1p(math.Exp(float64(x))))
}

// RMSNorm writes dst[i] = x[i] / sqrt(mean(x²) + eps) · w[i].
// dst, x, w: [n]; dst may alias x. GGUF norm weights already hold 1+w where
// the model multiplies by 1+w (qwen35), so no offset is applied here.
func RMSNorm(dst, x, w []float32, eps float32) {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	scale := float32(1 / math.Sqrt(ss/float64(len(x))+float64(eps)))
	w = w[:len(x)]
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = v * scale * w[i]
	}
}

// RMSNormHeads applies RMSNorm in place to each of the heads of x
// ([heads][dim], head h at x[h·stride : h·stride+dim]) with one shared
// weight w: [dim]. Used for q_norm/k_norm, where stride is 2·dim for qwen35's
// interleaved q/gate rows.
func RMSNormHeads(x []float32, heads, dim, stride int, w []float32, eps float32) {
	for h := range heads {
		v := x[h*stride : h*stride+dim]
		RMSNorm(v, v, w, eps)
	}
}

// L2Norm scales x ([n]) in place by 1/sqrt(Σx² + eps), as transformers'
// l2norm (eps 1e-6) for Gated DeltaNet q and k. (llama.cpp divides by
// max(‖x‖, eps) instead; the two differ only for near-zero vectors.)
func L2Norm(x []float32, eps float32) {
	var ss float64
	for _, v := range x {
		ss += float64(v) * float64(v)
	}
	s := float32(1 / math.Sqrt(ss+float64(eps)))
	for i := range x {
		x[i] *= s
	}
}

// RopeCosSin fills cos, sin ([nRot/2]) for position pos: angle
// θ_i = pos · base^(−2i/nRot), computed in float64.
func RopeCosSin(cos, sin []float32, pos, nRot int, base float32) {
	half := nRot / 2
	for i := range half {
		invFreq := math.Pow(float64(base), -2*float64(i)/float64(nRot))
		a := float64(pos) * invFreq
		cos[i] = float32(math.Cos(a))
		sin[i] = float32(math.Sin(a))
	}
}

// RoPE rotates dims [0, 2·len(cos)) of each head in place with NEOX pairing:
// (x[i], x[i+half]) → (x[i]·cos_i − x[i+half]·sin_i, x[i+half]·cos_i + x[i]·sin_i),
// half = len(cos). Head h is x[h·stride : h·stride+headDim]; dims past
// 2·half are left alone (partial rotary, qwen35 rotates 64 of 256).
func RoPE(x []float32, heads, stride int, cos, sin []float32) {
	half := len(cos)
	for h := range heads {
		v := x[h*stride : h*stride+2*half]
		for i := range half {
			a, b := v[i], v[i+half]
			v[i] = a*cos[i] - b*sin[i]
			v[i+half] = b*cos[i] + a*sin[i]
		}
	}
}

// AttendOne computes softmax attention of one query over t cached positions
// for one head: out[d] = Σ_j softmax_j(scale·q·k_j) · v_j[d].
// q, out: [dim]; keys, values: [t][rowStride] with this head's vector at
// offset off in each row (GQA: the KV head's offset); scores: scratch [t].
func AttendOne(out, q []float32, keys, values []float32, t, rowStride, off int, scale float32, scores []float32) {
	dim := len(q)
	scores = scores[:t]
	maxS := float32(math.Inf(-1))
	for j := range t {
		k := keys[j*rowStride+off : j*rowStride+off+dim]
		var s float32
		for d, qd := range q {
			s += qd * k[d]
		}
		s *= scale
		scores[j] = s
		maxS = max(maxS, s)
	}
	var sum float64
	for j, s := range scores {
		e := float32(math.Exp(float64(s - maxS)))
		scores[j] = e
		sum += float64(e)
	}
	inv := float32(1 / sum)
	out = out[:dim]
	clear(out)
	for j, p := range scores {
		v := values[j*rowStride+off : j*rowStride+off+dim]
		p *= inv
		for d := range out {
			out[d] += p * v[d]
		}
	}
}

// Attention runs AttendOne for every query head with grouped-query sharing:
// query head h reads KV head h / (nHead/nKV), as transformers' repeat_kv.
// q, out: [nHead][dim]; keys, values: [t][nKV·dim] (the KV cache of one
// layer); scores: scratch [nHead][≥t]. Heads are spread over the pool.
func Attention(p *Pool, out, q, keys, values []float32, t, nHead, nKV, dim int, scale float32, scores []float32) {
	group := nHead / nKV
	stride := len(scores) / nHead
	p.Parallel(nHead, 1, func(_, lo, hi int) {
		for h := lo; h < hi; h++ {
			AttendOne(out[h*dim:(h+1)*dim], q[h*dim:(h+1)*dim], keys, values, t, nKV*dim, (h/group)*dim, scale,
				scores[h*stride:(h+1)*stride])
		}
	})
}

// ConvStep advances a causal depthwise convolution by one token and applies
// SiLU: for each channel c, window = state[c] ++ x[c] (oldest first),
// out[c] = silu(Σ_j window[j]·w[c][j]), then state[c] = window[1:].
// x, out: [C]; state: [C][K-1]; w: [C][K] (ssm_conv1d, ne {K, C}).
func ConvStep(out, state, x, w []float32, channels, kernel int) {
	ks := kernel - 1
	for c := range channels {
		st := state[c*ks : (c+1)*ks]
		wc := w[c*kernel : (c+1)*kernel]
		s := x[c] * wc[ks]
		for j := range ks {
			s += st[j] * wc[j]
		}
		copy(st, st[1:])
		st[ks-1] = x[c]
		out[c] = SiLU(s)
	}
}

// DeltaRuleStep advances one Gated DeltaNet head by one token.
// state: [Sv][Sk] (row j = value index, column i = key index, so each row is
// contiguous for the k and q dot products); q, k: [Sk] (already
// L2-normalised, q scaled by 1/sqrt(Sk)); v, out: [Sv]; g ≤ 0 is the log
// decay; beta in (0,1) the write strength:
//
//	M ← exp(g)·M;  d_j = beta·(v_j − Σ_i M_ji k_i);  M_ji += d_j k_i;  out_j = Σ_i M_ji q_i
//
// The two sums accumulate in float64: out is about (q·k)·beta·v on early
// tokens and the gated norm that follows rescales it to unit size, so
// cancellation in these sums is amplified; the reference keeps it small.
func DeltaRuleStep(state, q, k, v, out []float32, g, beta float32) {
	sk := len(k)
	decay := float32(math.Exp(float64(g)))
	q = q[:sk]
	for j := range v {
		row := state[j*sk : (j+1)*sk : (j+1)*sk]
		var kv float64
		for i := range row {
			row[i] *= decay
			kv += float64(row[i]) * float64(k[i])
		}
		d := beta * (v[j] - float32(kv))
		var o float64
		for i := range row {
			row[i] += d * k[i]
			o += float64(row[i]) * float64(q[i])
		}
		out[j] = float32(o)
	}
}

// GatedRMSNorm writes dst[i] = x[i]/sqrt(mean(x²)+eps) · w[i] · silu(z[i]) for
// one head: x, z, dst: [n]; w: [n] (ssm_norm, shared by heads, stored as w).
func GatedRMSNorm(dst, x, z, w []float32, eps float32) {
	RMSNorm(dst, x, w, eps)
	for i := range dst[:len(x)] {
		dst[i] *= SiLU(z[i])
	}
}

// SwiGLU writes dst[i] = silu(gate[i]) · up[i]; all [n], dst may alias either.
func SwiGLU(dst, gate, up []float32) {
	up = up[:len(gate)]
	dst = dst[:len(gate)]
	for i, g := range gate {
		dst[i] = SiLU(g) * up[i]
	}
}

// Add writes dst[i] += x[i].
func Add(dst, x []float32) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] += x[i]
	}
}

package gpu

import (
	"fmt"
	"math"
	"testing"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// The chunk forms of the kernels between a prefill chunk's projections are
// held against their step kernels, run once per token on the same strided
// buffers: bit for bit, the guards between tokens included (the step
// kernels themselves are held against the CPU in kernels_gpu_test.go).

// TestGPUKernelRMSNormGatedChunk: rmsnorm_gated_chunk over n tokens writes
// each token's rows as rmsnorm_gated does, with out, x and z on their own
// token strides (z inside the input projection's output, as the chunk
// holds it) and nothing between the tokens' rows.
func TestGPUKernelRMSNormGatedChunk(t *testing.T) {
	v := ktGPU(t)
	const eps = 1e-6
	for i, tc := range []struct{ rows, n, tok int }{{16, 128, 8}, {32, 128, 3}, {3, 1000, 5}, {16, 128, 1}} {
		t.Run(fmt.Sprintf("%dx%d-n%d", tc.rows, tc.n, tc.tok), func(t *testing.T) {
			r := ktRand(uint64(1000 + i))
			m := tc.rows * tc.n
			outS, xS, zS := m+40, m+24, m+72 // token strides, each with room past a token's rows
			x := ktUniform(r, tc.tok*xS, -2, 2)
			z := ktUniform(r, tc.tok*zS, -4, 4)
			w := ktUniform(r, tc.n, 0.5, 1.5)
			dx, dz, dw := ktUpload(t, v, x, 0), ktUpload(t, v, z, 0), ktUpload(t, v, w, 0)
			want, got := v.alloc(t, tc.tok*outS*4), v.alloc(t, tc.tok*outS*4)
			v.poison(t, want, tc.tok*outS, ktNaN)
			v.poison(t, got, tc.tok*outS, ktNaN)
			for k := range tc.tok {
				ktMust(t, v.k.RMSNormGated(want.Add(uint64(4*k*outS)), dx.Add(uint64(4*k*xS)), dw, dz.Add(uint64(4*k*zS)),
					int32(tc.rows), int32(tc.n), eps))
			}
			ktMust(t, v.k.RMSNormGatedChunk(got, dx, dw, dz, int32(tc.rows), int32(tc.n), eps, int32(tc.tok), int32(outS), int32(xS), int32(zS)))
			all := ktGet[float32](t, v, got, tc.tok*outS)
			ktCheckBits(t, "out (guards included)", all, ktGet[float32](t, v, want, tc.tok*outS))
			ktCheckPoison(t, "guard after the last token", all[(tc.tok-1)*outS+m:], ktNaN)
		})
	}
}

// TestGPUKernelAttnPrepChunk: attn_prep_{f16,fp8}_chunk over n tokens at
// positions pos, pos+1, ... writes each token's q and fills each token's
// cache slot as attn_prep_{f16,fp8} at that position: the same q bits and
// the same cache and scale bytes everywhere, slots past the cache left
// alone (the last case runs past its end).
func TestGPUKernelAttnPrepChunk(t *testing.T) {
	v := ktGPU(t)
	const capy = 40
	const base, eps = float32(1e7), float32(1e-6)
	for ci, tc := range []struct {
		nh, nkv, dh, nRot, qStride, tok, pos int
	}{
		{8, 2, 256, 64, 512, 8, 3},   // qwen35: partial rotary, q read out of q|gate
		{4, 4, 128, 128, 128, 5, 20}, // full rotary, no gate
		{16, 4, 64, 32, 64, 6, 37},   // positions 40 and 41 lie past the cache
		{8, 2, 256, 64, 512, 1, 39},  // one token, in the cache's last slot
	} {
		t.Run(fmt.Sprintf("h%d-kv%d-d%d-n%d-pos%d", tc.nh, tc.nkv, tc.dh, tc.tok, tc.pos), func(t *testing.T) {
			r := ktRand(uint64(1100 + ci))
			nh, nkv, dh := tc.nh, tc.nkv, tc.dh
			// A token's projection output: q heads (at qStride) then kraw | v,
			// and room after it; q's token stride leaves a guard too.
			inS := nh*tc.qStride + 2*nkv*dh + 36
			qS := nh*dh + 20
			in := ktUniform(r, tc.tok*inS, -3, 3)
			din := ktUpload(t, v, in, 0)
			dqn, dkn := ktUpload(t, v, ktUniform(r, dh, 0.5, 1.5), 0), ktUpload(t, v, ktUniform(r, dh, 0.5, 1.5), 0)
			kvs := ktRandKVCaches(t, v, r, nkv, capy, dh)
			type caches struct {
				ktKVCaches
				q16, q8 cuda.DevPtr
			}
			mk := func() caches {
				c := caches{kvs(), v.alloc(t, tc.tok*qS*4), v.alloc(t, tc.tok*qS*4)}
				v.poison(t, c.q16, tc.tok*qS, ktNaN)
				v.poison(t, c.q8, tc.tok*qS, ktNaN)
				return c
			}
			ref, got := mk(), mk()
			kvAt := uint64(nh*tc.qStride) * 4
			for k := range tc.tok {
				qg := din.Add(uint64(4 * k * inS))
				kraw := qg.Add(kvAt)
				vv := kraw.Add(uint64(nkv*dh) * 4)
				q16, q8 := ref.q16.Add(uint64(4*k*qS)), ref.q8.Add(uint64(4*k*qS))
				p := int32(tc.pos + k)
				ktMust(t, v.k.AttnPrepF16(q16, qg, int32(tc.qStride), dqn, kraw, dkn, vv, ref.k16, ref.v16,
					int32(nh), int32(nkv), int32(dh), int32(tc.nRot), capy, p, 0, base, eps))
				ktMust(t, v.k.AttnPrepFP8(q8, qg, int32(tc.qStride), dqn, kraw, dkn, vv, ref.k8, ref.v8, ref.ks, ref.vs,
					int32(nh), int32(nkv), int32(dh), int32(tc.nRot), capy, p, 0, base, eps))
			}
			kraw := din.Add(kvAt)
			vv := kraw.Add(uint64(nkv*dh) * 4)
			ktMust(t, v.k.AttnPrepF16Chunk(got.q16, din, int32(tc.qStride), dqn, kraw, dkn, vv, got.k16, got.v16,
				int32(nh), int32(nkv), int32(dh), int32(tc.nRot), capy, int32(tc.pos), base, eps, int32(tc.tok), int32(qS), int32(inS)))
			ktMust(t, v.k.AttnPrepFP8Chunk(got.q8, din, int32(tc.qStride), dqn, kraw, dkn, vv, got.k8, got.v8, got.ks, got.vs,
				int32(nh), int32(nkv), int32(dh), int32(tc.nRot), capy, int32(tc.pos), base, eps, int32(tc.tok), int32(qS), int32(inS)))
			against := fmt.Sprintf(" against %d step launches", tc.tok)
			ktCheckBits(t, "q (f16 launch, guards included)"+against, ktGet[float32](t, v, got.q16, tc.tok*qS), ktGet[float32](t, v, ref.q16, tc.tok*qS))
			ktCheckBits(t, "q (fp8 launch, guards included)"+against, ktGet[float32](t, v, got.q8, tc.tok*qS), ktGet[float32](t, v, ref.q8, tc.tok*qS))
			got.check(t, v, "", against, ref.ktKVCaches)
			// The chunk wrote every token's q: none of it is the poison.
			q := ktGet[float32](t, v, got.q16, tc.tok*qS)
			for k := range tc.tok {
				for i, x := range q[k*qS : k*qS+nh*dh] {
					if math.IsNaN(float64(x)) {
						t.Fatalf("token %d: q[%d] not written", k, i)
					}
				}
			}
		})
	}
}

// TestGPUKernelAttnCombineChunk: attn_combine_chunk over n tokens merges
// each token's partials as attn_combine does, with and without the output
// gate, partials with empty splits among them, every buffer on its own
// token stride.
func TestGPUKernelAttnCombineChunk(t *testing.T) {
	v := ktGPU(t)
	for i, tc := range []struct{ nHead, dh, ns, tok int }{{8, 256, 3, 8}, {6, 64, 1, 5}, {4, 128, 300, 3}, {8, 256, 3, 1}} {
		t.Run(fmt.Sprintf("h%d-d%d-splits%d-n%d", tc.nHead, tc.dh, tc.ns, tc.tok), func(t *testing.T) {
			r := ktRand(uint64(1200 + i))
			slots := tc.nHead * tc.ns
			msS, accS, outS, gateS := 2*slots+6, slots*tc.dh+32, tc.nHead*tc.dh+24, 2*tc.nHead*tc.dh+40
			ms := make([]float32, tc.tok*msS)
			acc := make([]float32, tc.tok*accS)
			for k := range tc.tok {
				for p := range slots {
					m, a := ms[k*msS+2*p:], acc[k*accS+p*tc.dh:]
					if p == 0 || r.Float32() < 0.25 {
						m[0], m[1] = float32(math.Inf(-1)), 0
						continue
					}
					l := 1 + 63*r.Float32()
					m[0], m[1] = 10*r.Float32()-5, l
					for d := range tc.dh {
						a[d] = l * (2*r.Float32() - 1)
					}
				}
			}
			gate := ktUniform(r, tc.tok*gateS, -3, 3)
			dms, dacc, dgate := ktUpload(t, v, ms, 0), ktUpload(t, v, acc, 0), ktUpload(t, v, gate, 0)
			want, got := v.alloc(t, tc.tok*outS*4), v.alloc(t, tc.tok*outS*4)
			for _, gated := range []bool{false, true} {
				gp := cuda.DevPtr(0)
				if gated {
					gp = dgate.Add(uint64(tc.dh * 4))
				}
				v.poison(t, want, tc.tok*outS, ktNaN)
				v.poison(t, got, tc.tok*outS, ktNaN)
				for k := range tc.tok {
					gk := cuda.DevPtr(0)
					if gated {
						gk = gp.Add(uint64(4 * k * gateS))
					}
					ktMust(t, v.k.AttnCombine(want.Add(uint64(4*k*outS)), dms.Add(uint64(4*k*msS)), dacc.Add(uint64(4*k*accS)), gk,
						int32(tc.nHead), int32(tc.dh), int32(tc.ns), int32(2*tc.dh)))
				}
				ktMust(t, v.k.AttnCombineChunk(got, dms, dacc, gp, int32(tc.nHead), int32(tc.dh), int32(tc.ns), int32(2*tc.dh),
					int32(tc.tok), int32(outS), int32(msS), int32(accS), int32(gateS)))
				all := ktGet[float32](t, v, got, tc.tok*outS)
				ktCheckBits(t, fmt.Sprintf("gate %v: out (guards included)", gated), all, ktGet[float32](t, v, want, tc.tok*outS))
				ktCheckPoison(t, "guard after the last token", all[(tc.tok-1)*outS+tc.nHead*tc.dh:], ktNaN)
			}
		})
	}
}

// TestGPUKernelAttnSplitChunk: attn_split_chunk_{f16,fp8}_dD over n tokens
// at t_kv, t_kv+1, ... keys writes each token's partials as the step's
// vector split at that t_kv: every head dim and cache, hpb 1 (more blocks a
// group) and the kernel's G (4 at head dim 256, which tiles a group of 6 as
// 3 + 3), splits fewer and more than the keys fill, chunks of 1 to 8
// tokens, each token's partials on its own stride with a guard after them.
func TestGPUKernelAttnSplitChunk(t *testing.T) {
	v := ktGPU(t)
	const capy = 200
	for ci, tc := range []struct {
		dh, nh, nkv, tkv, ns, tok int
		fp8                       bool
	}{
		{256, 8, 2, 100, 2, 8, false}, {256, 8, 2, 60, 3, 5, true}, {256, 16, 4, 190, 66, 5, false},
		{256, 12, 2, 80, 2, 1, true}, // a group of 6: hpb 4 tiles it 3 + 3
		{128, 16, 4, 70, 2, 5, false}, {128, 16, 4, 9, 20, 8, true},
		{64, 16, 2, 120, 3, 5, true}, {64, 16, 2, 33, 1, 5, false},
	} {
		tok := tc.tok
		for _, hpb := range []int{1, kernels.AttnHeadsPerBlock(tc.dh, true)} {
			t.Run(fmt.Sprintf("d%d-h%d-kv%d-fp8%v-t%d-s%d-n%d-hpb%d", tc.dh, tc.nh, tc.nkv, tc.fp8, tc.tkv, tc.ns, tok, hpb), func(t *testing.T) {
				r := ktRand(uint64(1300 + ci))
				dh, n := tc.dh, tc.nkv*capy*tc.dh
				var dk, dv, dks, dvs cuda.DevPtr
				kf, vf := ktUniform(r, n, -1, 1), ktUniform(r, n, -1, 1)
				if tc.fp8 {
					kc, vc, kd := make([]uint8, n), make([]uint8, n), make([]float32, dh)
					ks, vs := make([]float32, tc.nkv*capy), make([]float32, tc.nkv*capy)
					for row := range tc.nkv * capy {
						o := row * dh
						ks[row] = ktFP8Row(kf[o:o+dh], kc[o:o+dh], kd)
						vs[row] = ktFP8Row(vf[o:o+dh], vc[o:o+dh], kd)
					}
					dk, dv, dks, dvs = ktUpload(t, v, kc, 0), ktUpload(t, v, vc, 0), ktUpload(t, v, ks, 0), ktUpload(t, v, vs, 0)
				} else {
					kc, vc := make([]uint16, n), make([]uint16, n)
					for i := range n {
						kc[i], vc[i] = gguf.F32ToF16(kf[i]), gguf.F32ToF16(vf[i])
					}
					dk, dv = ktUpload(t, v, kc, 0), ktUpload(t, v, vc, 0)
				}
				qS := tc.nh*dh + 12
				msS, accS := tc.nh*tc.ns*2+6, tc.nh*tc.ns*dh+20 // each with a guard after a token's partials
				dq := ktUpload(t, v, ktUniform(r, tok*qS, -2, 2), 0)
				scale := float32(1 / math.Sqrt(float64(dh)))
				type parts struct{ ms, acc cuda.DevPtr }
				mk := func() parts {
					p := parts{v.alloc(t, tok*msS*4), v.alloc(t, tok*accS*4)}
					v.poison(t, p.ms, tok*msS, ktNaN)
					v.poison(t, p.acc, tok*accS, ktNaN)
					return p
				}
				want, got := mk(), mk()
				sv := AttnSplitVariant{HeadDim: dh, FP8: b2i(tc.fp8), Vec: 1}
				for k := range tok {
					ktMust(t, v.k.AttnSplit(sv, want.ms.Add(uint64(4*k*msS)), want.acc.Add(uint64(4*k*accS)), dq.Add(uint64(4*k*qS)), dk, dv, dks, dvs,
						int32(tc.nh), int32(tc.nkv), capy, int32(tc.ns), int32(hpb), int32(tc.tkv+k), 0, scale))
				}
				ktMust(t, v.k.AttnSplitChunk(AttnSplitChunkVariant{HeadDim: dh, FP8: b2i(tc.fp8)}, got.ms, got.acc, dq, dk, dv, dks, dvs,
					int32(tc.nh), int32(tc.nkv), capy, int32(tc.ns), int32(hpb), int32(tc.tkv), scale, int32(tok), int32(qS), int32(msS), int32(accS)))
				ktCheckBits(t, "part_ms (guards included)", ktGet[float32](t, v, got.ms, tok*msS), ktGet[float32](t, v, want.ms, tok*msS))
				ktCheckBits(t, "part_acc (guards included)", ktGet[float32](t, v, got.acc, tok*accS), ktGet[float32](t, v, want.acc, tok*accS))
				ms := ktGet[float32](t, v, got.ms, tok*msS)
				ktCheckPoison(t, "guard after the last token's part_ms", ms[(tok-1)*msS+tc.nh*tc.ns*2:], ktNaN)
				if math.IsNaN(float64(ms[(tok-1)*msS+1])) {
					t.Fatal("the last token's first partial was not written")
				}
			})
		}
	}
}

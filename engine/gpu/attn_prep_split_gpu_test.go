package gpu

import (
	"fmt"
	"testing"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// TestGPUKernelAttnPrepSplit: attn_prep_split_f16_dD must give the bits of
// attn_prep_f16 followed by attn_split_vec_f16_dD on the same inputs: the
// partials (max, sum and accumulator of every q head and split) and both
// caches, byte for byte, the new row stored and every other row untouched.
// Both paths run the same device functions (attn_prep's head norm and rope,
// the split's loop and merges), and the fused kernel takes the step's own
// row from its f16 rounding in shared memory, so nothing may differ. Over
// head dims 64, 128 and 256 and their GQA groups, contexts of 1 to the
// cache's capacity (the row in its last slot), split counts of one, the
// bucket's, 4 and more than the keys (empty splits, among them the one whose
// block stores the row), every q heads a block up to the kernel's G, and
// positions from the host and from the device counters.
func TestGPUKernelAttnPrepSplit(t *testing.T) {
	v := ktGPU(t)
	const capy = 300
	const base, eps = float32(1e7), float32(1e-6)
	for ci, tc := range []struct {
		nh, nkv, dh, nRot, qStride int
	}{
		{8, 2, 256, 64, 512},  // qwen35: partial rotary, q read out of q|gate
		{4, 4, 128, 128, 128}, // qwen3: full rotary, no gate
		{16, 4, 64, 32, 64},
		{24, 2, 256, 64, 512}, // groups of 12: hpb that does not divide them
	} {
		t.Run(fmt.Sprintf("h%d-kv%d-d%d", tc.nh, tc.nkv, tc.dh), func(t *testing.T) {
			r := ktRand(uint64(1300 + ci))
			nh, nkv, dh := tc.nh, tc.nkv, tc.dh
			split, err := ktAttnSplit(v.k, dh, false, true, false)
			if err != nil {
				t.Fatal(err)
			}
			// Finite caches (f16 of U(-1,1)), as decode leaves them.
			n := nkv * capy * dh
			c16 := make([]uint16, 2*n)
			for i := range c16 {
				c16[i] = gguf.F32ToF16(2*r.Float32() - 1)
			}
			qn, kn := ktUpload(t, v, ktUniform(r, dh, 0.5, 1.5), 0), ktUpload(t, v, ktUniform(r, dh, 0.5, 1.5), 0)
			ctr := ktCounters(t, v, 0, 0, 0, 0)
			q := v.alloc(t, nh*dh*4)
			g := kernels.AttnHeadsPerBlock(dh, true)
			scale := float32(0.0625)
			for _, T := range []int{1, 2, 63, 65, 200, capy} {
				nss := []int{1, (T + 63) / 64, 4}
				if T < 64 {
					nss = append(nss, T+3)
				}
				for _, ns := range nss {
					for hpb := 1; hpb <= min(g, nh/nkv); hpb++ {
						for _, dev := range []bool{false, true} {
							what := fmt.Sprintf("t_kv %d, %d splits, %d q heads a block, device counters %v", T, ns, hpb, dev)
							qg := ktUpload(t, v, ktUniform(r, nh*tc.qStride, -3, 3), 0)
							kvIn := ktUpload(t, v, ktUniform(r, 2*nkv*dh, -3, 3), 0) // kraw | v, as the q|k|v matvec writes them
							kraw, vin := kvIn, kvIn.Add(uint64(nkv*dh)*4)
							p, tkv := int32(T-1), int32(T)
							var dpos, dtkv cuda.DevPtr
							if dev {
								ktSetCounters(t, v, ctr, 0, p, tkv, 0)
								dpos, dtkv = ctr.Add(kernels.CounterPos), ctr.Add(kernels.CounterTKV)
								p, tkv = 7, 9 // the counters win
							}
							ref := [2]cuda.DevPtr{ktUpload(t, v, c16[:n], 0), ktUpload(t, v, c16[n:], 0)}
							got := [2]cuda.DevPtr{ktUpload(t, v, c16[:n], 0), ktUpload(t, v, c16[n:], 0)}
							parts := func() (ms, acc cuda.DevPtr) {
								ms, acc = v.alloc(t, nh*ns*2*4), v.alloc(t, nh*ns*dh*4)
								v.poison(t, ms, nh*ns*2, ktNaN)
								v.poison(t, acc, nh*ns*dh, ktNaN)
								return ms, acc
							}
							refMS, refAcc := parts()
							gotMS, gotAcc := parts()
							ktMust(t, v.k.AttnPrepF16(q, qg, int32(tc.qStride), qn, kraw, kn, vin, ref[0], ref[1],
								int32(nh), int32(nkv), int32(dh), int32(tc.nRot), capy, p, dpos, base, eps))
							ktMust(t, split(refMS, refAcc, q, ref[0], ref[1], 0, 0, int32(nh), int32(nkv), capy, int32(ns), int32(hpb), tkv, dtkv, scale))
							ktMust(t, v.k.AttnPrepSplit(AttnPrepSplitVariant{HeadDim: dh}, gotMS, gotAcc, qg, int32(tc.qStride), qn, kraw, kn, vin,
								got[0], got[1], int32(nh), int32(nkv), int32(tc.nRot), capy, int32(ns), int32(hpb), tkv, dtkv, p, dpos,
								base, eps, scale))
							ktCheckBits(t, what+": max and sum", ktGet[float32](t, v, gotMS, nh*ns*2), ktGet[float32](t, v, refMS, nh*ns*2))
							ktCheckBits(t, what+": accumulators", ktGet[float32](t, v, gotAcc, nh*ns*dh), ktGet[float32](t, v, refAcc, nh*ns*dh))
							ktCheckBytes(t, what+": k cache", ktGet[byte](t, v, got[0], 2*n), ktGet[byte](t, v, ref[0], 2*n))
							ktCheckBytes(t, what+": v cache", ktGet[byte](t, v, got[1], 2*n), ktGet[byte](t, v, ref[1], 2*n))
							if t.Failed() {
								return
							}
						}
					}
				}
			}
		})
	}
}

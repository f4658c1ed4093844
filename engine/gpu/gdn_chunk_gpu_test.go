package gpu

import (
	"fmt"
	"testing"

	"github.com/memra-ai/memra/engine/model"
)

// TestGPUKernelGDNConvChunk: gdn_conv_chunk over n tokens must write every
// token's y and leave the window state with the bits of n gdn_conv steps
// (which TestGPUKernelGDNConv holds against the CPU's ConvStep), in the
// registers' form (kern 4, as qwen35 has, and 2) and the memory form (kern
// 10 > MEMRA_CONV_MAX), with strided tokens and poisoned guards between
// them; chunks of 1 token too (a prompt's last chunk can be one), of 2
// (the second warp's window reaches back into the state), of 32 and 13
// (every warp a run, the last one short) and of 64 and 70 (a full round of
// 8 warps of 8 tokens; a second round of 6, each window starting inside
// the chunk), and the registers' widest kernel (8 = MEMRA_CONV_MAX, whose
// windows reach back through several warps' runs in a chunk of 5) and the
// narrowest memory one (9).
func TestGPUKernelGDNConvChunk(t *testing.T) {
	v := ktGPU(t)
	for i, tc := range []struct{ channels, kern, n int }{{1024, 4, 8}, {1000, 4, 3}, {300, 2, 5}, {260, 10, 4}, {1024, 4, 1}, {260, 10, 1},
		{1000, 4, 2}, {6144, 4, 32}, {1000, 4, 13}, {300, 2, 64}, {1024, 4, 70}, {260, 10, 33},
		{500, 8, 5}, {500, 8, 40}, {300, 3, 7}, {300, 9, 6}} {
		t.Run(fmt.Sprintf("c%d-k%d-n%d", tc.channels, tc.kern, tc.n), func(t *testing.T) {
			r := ktRand(uint64(900 + i))
			c, n := tc.channels, tc.n
			xs, ys := c+40, c+24 // token strides; ys leaves a guard after each token's y
			state := ktUniform(r, c*(tc.kern-1), -1, 1)
			w := ktUniform(r, c*tc.kern, -1, 1)
			x := ktUniform(r, n*xs, -2, 2)
			dw, dx := ktUpload(t, v, w, 0), ktUpload(t, v, x, 0)
			stepState, chunkState := ktUpload(t, v, state, 0), ktUpload(t, v, state, 0)
			want, got := v.alloc(t, n*ys*4), v.alloc(t, n*ys*4)
			v.poison(t, want, n*ys, ktNaN)
			v.poison(t, got, n*ys, ktNaN)
			for tk := range n {
				ktMust(t, v.k.GDNConv(want.Add(uint64(4*tk*ys)), stepState, dx.Add(uint64(4*tk*xs)), dw, int32(c), int32(tc.kern)))
			}
			ktMust(t, v.k.GDNConvChunk(got, chunkState, dx, dw, int32(c), int32(tc.kern), int32(n), int32(xs), int32(ys)))
			ktCheckBits(t, "y (guards included)", ktGet[float32](t, v, got, n*ys), ktGet[float32](t, v, want, n*ys))
			ktCheckBits(t, "state", ktGet[float32](t, v, chunkState, len(state)), ktGet[float32](t, v, stepState, len(state)))
			ktCheckPoison(t, "guard after the last token", ktGet[float32](t, v, got, n*ys)[(n-1)*ys+c:], ktNaN)
		})
	}
}

// TestGPUKernelGDNDeltaChunk: gdn_delta_chunk over n tokens must write
// every token's o and leave the state with the bits of n gdn_delta steps
// (which TestGPUKernelGDNDelta holds against the CPU's DeltaRuleStep), both
// head maps, q|k|v of a token side by side as the conv output holds them
// and b, a strided as the input projection's output holds them; chunks
// of 1, 2 and 13 tokens too (a round of 16 prepared tokens, part of it
// past the chunk's end), 32 (two full rounds), 20 (a short second) and 64
// (the longest chunk).
func TestGPUKernelGDNDeltaChunk(t *testing.T) {
	v := ktGPU(t)
	const S = 128
	for i, tc := range []struct{ hk, hv, headMap, n int }{{2, 4, 0, 8}, {2, 4, 1, 3}, {16, 32, 0, 5}, {16, 32, 1, 8}, {16, 32, 0, 1},
		{16, 16, 0, 32}, {16, 32, 1, 13}, {2, 4, 0, 2}, {16, 16, 1, 20}, {16, 32, 0, 64}} {
		t.Run(fmt.Sprintf("hk%d-hv%d-map%d-n%d", tc.hk, tc.hv, tc.headMap, tc.n), func(t *testing.T) {
			r := ktRand(uint64(950 + i))
			n, K, V := tc.n, tc.hk*S, tc.hv*S
			yS, baS, oS := alignFloats(2*K+V), alignFloats(V+2*tc.hv)+64, V+64 // token strides
			state := ktUniform(r, tc.hv*S*S, -0.3, 0.3)
			y := ktUniform(r, n*yS, -1, 1)
			ba := ktUniform(r, n*baS, -2, 2)
			dA := ktUpload(t, v, ktUniform(r, tc.hv, -2, -0.1), 0)
			dDt := ktUpload(t, v, ktUniform(r, tc.hv, -1, 1), 0)
			dy, dba := ktUpload(t, v, y, 0), ktUpload(t, v, ba, 0)
			db, da := dba.Add(uint64(4*V)), dba.Add(uint64(4*(V+tc.hv))) // b and a after z, as in the input projection's output
			stepState, chunkState := ktUpload(t, v, state, 0), ktUpload(t, v, state, 0)
			want, got := v.alloc(t, n*oS*4), v.alloc(t, n*oS*4)
			v.poison(t, want, n*oS, ktNaN)
			v.poison(t, got, n*oS, ktNaN)
			for tk := range n {
				yt, bt := dy.Add(uint64(4*tk*yS)), uint64(4*tk*baS)
				ktMust(t, v.k.GDNDelta(stepState, want.Add(uint64(4*tk*oS)), yt, yt.Add(uint64(4*K)), yt.Add(uint64(8*K)),
					db.Add(bt), da.Add(bt), dA, dDt, int32(tc.hk), int32(tc.hv), int32(tc.headMap), model.L2NormEps))
			}
			ktMust(t, v.k.GDNDeltaChunk(chunkState, got, dy, dy.Add(uint64(4*K)), dy.Add(uint64(8*K)), db, da, dA, dDt,
				int32(tc.hk), int32(tc.hv), int32(tc.headMap), model.L2NormEps, int32(n), int32(yS), int32(baS), int32(oS)))
			ktCheckBits(t, "o (guards included)", ktGet[float32](t, v, got, n*oS), ktGet[float32](t, v, want, n*oS))
			ktCheckBits(t, "state", ktGet[float32](t, v, chunkState, len(state)), ktGet[float32](t, v, stepState, len(state)))
		})
	}
}

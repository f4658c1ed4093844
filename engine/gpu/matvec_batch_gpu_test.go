package gpu

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// TestGPUKernelMatvecBatch: every matvec_batch kernel, for n tokens at
// once, must write each token's y with the bits of its decode kernel (every
// variant of the matvec family, the q8_0 and K-quant wave forms included)
// run on that token alone, the tokens of other magnitudes: in each mode, with matvec_batch_norm's inputs
// against the decode kernel's fused norm and without a norm, x read from
// global memory or, by q8_0's staged kernels, copied into shared memory
// (the loads through the rings) or, by its laid kernels, laid out in
// global memory by matvec_batch_lay (the loads through the rings); the K-quants' tensor-core kernels over
// matvec_batch_kq_stage's copies, its norm against the decode kernel's,
// on shapes that take the 16-byte path with and without an odd tail, the
// element-wise path (odd or misaligned columns), partial row units and
// grids that loop over units. A prompt fed in chunks is only the prompt fed
// token by token if this holds. Guards between the tokens' rows must keep
// their poison. The first token's plain products of the CUDA-core kernels
// are also held against the float64 dot of the same weights, with
// TestGPUKernelMatvec's bound (which holds the K-quant decode kernels, whose
// bits the batch kernels' are, to theirs).
func TestGPUKernelMatvecBatch(t *testing.T) {
	v := ktGPU(t)
	all := []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0}
	unq := []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16}
	kq := []gguf.Type{gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ3_K, gguf.TypeIQ4_XS, gguf.TypeQ4_0, gguf.TypeIQ4_NL} // cols % 256 == 0
	for i, sh := range []struct {
		rows, cols int
		types      []gguf.Type
		misalign   bool
	}{
		{1003, 1024, all, false},
		{17, 2304, all, false}, // q8_0: 144 chunks, a tail after the paired loads
		{2050, 96, all, false}, // more units than a small grid: blocks loop
		{40, 6144, all, false}, // q8_0 lane order, 3 trips a pair; 5 staged copies beside the rings (8 do not fit)
		{64, 1024, all, true},  // W and x misaligned: the element-wise path
		{67, 1001, unq, false}, // odd cols
		{33, 4100, unq, false}, // f32 16-byte, 16-bit element-wise
		{1003, 1024, kq, false},
		{17, 2304, kq, false},  // 9 superblocks: warps with unequal shares
		{2050, 256, kq, false}, // more units than a small grid: blocks loop, the rings cross units
		{40, 6144, kq, false},  // 24 superblocks: 6 a warp (KW4), 3 (KW8)
	} {
		for _, typ := range sh.types {
			for _, mv := range MatvecVariants() {
				if mv.GgmlType != int(typ) {
					continue
				}
				// 4: the K-quant kernels' second token group (tokens 4-7)
				// exactly empty; 1 and 5: groups with dead tokens in them;
				// 13 and 16: two passes (grid rows), the second short or full.
				for _, n := range []int{1, 4, 5, kernels.MatvecBatchTokens, 13, 2 * kernels.MatvecBatchTokens} {
					name := fmt.Sprintf("%s-wide%d-%dx%d-n%d", typ, mv.Wide, sh.rows, sh.cols, n)
					if mv.Lean != 0 { // the batch kernel against the lean decode kernel: the same bits
						name = strings.Replace(name, "-", "-lean-", 1)
					}
					if sh.misalign {
						name += "-misaligned"
					}
					t.Run(name, func(t *testing.T) {
						v.skipUnfit(t, mv, sh.cols)
						ktMatvecBatchCase(t, v, mv, sh.rows, sh.cols, n, sh.misalign, uint64(1000+100*i)+uint64(typ))
					})
				}
			}
		}
	}
}

func ktMatvecBatchCase(t *testing.T, v *ktEnv, mv MatvecVariant, rows, cols, n int, misalign bool, seed uint64) {
	typ := gguf.Type(mv.GgmlType)
	bv := MatvecBatchVariant{GgmlType: mv.GgmlType, Wide: b2i(mv.Wide != 0)}
	bk, ok := batchKernel(bv)
	if !ok {
		t.Fatalf("no batch kernel for %+v", mv)
	}
	sv, lv := bv, bv
	sv.Staged, lv.Laid = 1, 1
	sk, hasStaged := batchKernel(sv)
	_, hasLaid := batchKernel(lv)
	r := ktRand(seed)
	w := ktTensor(t, "w", typ, ktUniform(r, rows*cols, -1, 1), cols, rows)
	woff, xoff := 0, 0
	if misalign {
		woff, xoff = 4, 4
		if typ == gguf.TypeQ8_0 {
			woff = 2
		}
	}
	dw, ds := ktWeights(t, v, w, woff, typ == gguf.TypeQ8_0 && mv.Wide != 0)
	xs, ys := alignFloats(cols), alignFloats(rows)+64 // 64 floats of guard after each token's rows
	xh := ktUniform(r, n*xs, -1, 1)
	// Tokens of other magnitudes, and an outlier a token that the norm
	// does not scale away, so that each token's staged 2^-k differs
	// (matvec_batch_kq_stage; a kernel that unscaled one token by
	// another's would fail).
	for tk := range n {
		for c := range cols {
			xh[tk*xs+c] *= float32(math.Ldexp(1, tk-3))
		}
		xh[tk*xs+(7*tk)%cols] = float32(4 * (tk + 1))
	}
	dx := v.alloc(t, len(xh)*4+16)
	ktMust(t, v.e.CopyHtoD(dx.Add(uint64(xoff)), cuda.AsBytes(xh)))
	dx = dx.Add(uint64(xoff))
	nwh := ktUniform(r, cols, 0.5, 1.5)
	nw := ktUpload(t, v, nwh, 0)
	// One token more than the launch's: the kernel must leave it alone.
	y0 := ktUniform(r, (n+1)*ys, -4, 4)
	want, got := v.alloc(t, (n+1)*ys*4), v.alloc(t, (n+1)*ys*4)
	dxn := v.alloc(t, n*xs*4) // matvec_batch_norm's output: 256-byte aligned, as a chunk's xn
	ks := alignFloats(kernels.KQStageFloats(cols))
	dxk := v.alloc(t, n*ks*4) // matvec_batch_kq_stage's output, as a chunk's kx
	dxl := v.alloc(t, n*xs*4) // matvec_batch_lay's output, as a chunk's lx
	units := (rows + bk.RowsPerBlock - 1) / bk.RowsPerBlock

	for _, mode := range []int32{mvStore, mvAccumulate, mvSwiGLU} {
		// normed: matvec_batch_norm into dxn, the batch kernel over it,
		// against the decode kernel's fused norm. staged: x copied into
		// shared memory, its loads through the rings. laid: x laid out by
		// matvec_batch_lay into dxl, its loads through the rings.
		type source struct {
			normed bool
			from   xFrom
		}
		for _, c := range []source{{false, fromGlobal}, {false, fromStaged}, {false, fromLaid}, {true, fromGlobal}, {true, fromStaged}, {true, fromLaid}} {
			kv := bv
			switch c.from {
			case fromStaged:
				if !hasStaged || sk.Shared(n, cols)-sk.Ring() > v.stageRoom {
					continue // no staged kernel for the type, or copies that do not fit beside the rings: the host stages none (prefillPlan.from)
				}
				kv = sv
			case fromLaid:
				if !hasLaid || misalign {
					continue // no laid kernel for the type, or misaligned weights, which the host never lays out (laidAligned)
				}
				kv = lv
			}
			stage := fmt.Sprintf("normed=%v from=%d", c.normed, c.from)
			norm, xnorm, in := cuda.DevPtr(0), int32(0), dx
			if c.normed {
				norm, xnorm, in = nw, 1, dxn
			}
			inS := xs
			if bk.TensorCore {
				in, inS = dxk, ks // staged below, normed or not
			}
			out := rows
			if mode == mvSwiGLU {
				out = rows / 2
			}
			for _, blocks := range []int{units, min(3, units)} {
				for _, p := range []cuda.DevPtr{want, got} {
					v.poison(t, p, (n+1)*ys, ktNaN)
					if mode == mvAccumulate {
						ktPut(t, v, p, y0)
					}
				}
				for tk := range n {
					ktMust(t, v.k.Matvec(mv, want.Add(uint64(4*tk*ys)), dw, ds, dx.Add(uint64(4*tk*xs)), int32(rows), int32(cols), mode,
						norm, xnorm, 1e-6, matvecUnits(mv, rows)))
				}
				switch {
				case bk.TensorCore:
					v.poison(t, dxk, n*ks, ktNaN)
					ktMust(t, v.k.MatvecBatchKQStage(dxk, dx, norm, int32(n), int32(cols), int32(xs), int32(ks), xnorm, 1e-6,
						int32(kqLayout(dtensor{typ: typ}))))
				case c.normed:
					v.poison(t, dxn, n*xs, ktNaN)
					ktMust(t, v.k.MatvecBatchNorm(dxn, dx, nw, int32(n), int32(cols), int32(xs), int32(xs), 1e-6))
				}
				launchIn, launchS := in, inS
				if c.from == fromLaid {
					v.poison(t, dxl, n*xs, ktNaN)
					ktMust(t, v.k.MatvecBatchLay(dxl, in, int32(n), int32(cols), int32(inS), int32(xs)))
					launchIn, launchS = dxl, xs
				}
				ktMust(t, v.k.MatvecBatch(kv, got, dw, ds, launchIn, int32(rows), int32(cols), mode, int32(n), int32(launchS), int32(ys), blocks))
				wh, gh := ktGet[uint32](t, v, want, (n+1)*ys), ktGet[uint32](t, v, got, (n+1)*ys)
				for i := n * ys; i < (n+1)*ys; i++ {
					before := ktNaN
					if mode == mvAccumulate {
						before = math.Float32bits(y0[i])
					}
					if gh[i] != before {
						t.Fatalf("mode %d %s: %#08x at %d of token %d, past the %d launched, was %#08x", mode, stage, gh[i], i-n*ys, n, n, before)
					}
				}
				for tk := range n {
					at := tk * ys
					if i := ktFirstDiff(gh[at:at+out], wh[at:at+out]); i >= 0 {
						t.Fatalf("mode %d %s blocks %d token %d row %d: batch %#08x, decode %#08x", mode, stage, blocks, tk, i,
							gh[at+i], wh[at+i])
					}
					// Past a token's rows: what was there before.
					for i := at + out; i < at+ys; i++ {
						before := ktNaN
						if mode == mvAccumulate {
							before = math.Float32bits(y0[i])
						}
						if gh[i] != before {
							t.Fatalf("mode %d token %d: %#08x at %d past its %d rows, was %#08x", mode, tk, gh[i], i-at, out, before)
						}
					}
				}
			}
		}
	}

	// matvec_batch_norm against the float64 norm of every token: relative
	// error bound (cols/256+30)·u, from a sum of squares through cols/256+4
	// thread-partial steps, 5 butterfly levels and 8 warp partials (halved by
	// the square root), then the division, the root, the reciprocal and two
	// products.
	v.poison(t, dxn, n*xs, ktNaN)
	ktMust(t, v.k.MatvecBatchNorm(dxn, dx, nw, int32(n), int32(cols), int32(xs), int32(xs), 1e-6))
	xn := ktGet[float32](t, v, dxn, n*xs)
	for tk := range n {
		x := xh[tk*xs : tk*xs+cols]
		var ss float64
		for _, xv := range x {
			ss += float64(xv) * float64(xv)
		}
		inv := 1 / math.Sqrt(ss/float64(cols)+1e-6)
		ref := make([]float64, cols)
		for c := range ref {
			ref[c] = float64(x[c]) * inv * float64(nwh[c])
		}
		ktCheckElems(t, fmt.Sprintf("matvec_batch_norm token %d vs float64", tk), xn[tk*xs:tk*xs+cols], ref,
			func(i int) float64 { return float64(cols/256+30) * ktU * math.Abs(ref[i]) })
	}

	if bk.TensorCore {
		return // TestGPUKernelMatvec holds the decode kernels, whose bits these are, to the float64 sums with their own bounds
	}
	// The float64 reference for the first token's plain products (mode 0,
	// no norm): TestGPUKernelMatvec's bound, (cols/32+48)·u·Σ|w x|.
	v.poison(t, got, n*ys, ktNaN)
	ktMust(t, v.k.MatvecBatch(bv, got, dw, ds, dx, int32(rows), int32(cols), mvStore, int32(n), int32(xs), int32(ys), units))
	gf := ktGet[float32](t, v, got, rows)
	deq := ktDequant(t, w)
	ref, abs := make([]float64, rows), make([]float64, rows)
	for row := range rows {
		for c := range cols {
			p := float64(deq[row*cols+c]) * float64(xh[c])
			ref[row] += p
			abs[row] += math.Abs(p)
		}
	}
	depth := float64(cols/32 + 48)
	ktCheckElems(t, "token 0 vs float64", gf, ref, func(i int) float64 { return depth * ktU * abs[i] })
}

package gpu

// GPU tests of every CUDA kernel of kernels/ against its CPU reference
// (engine/cpu, the Go fp8/f16 codecs, or the float64 references of
// kernels_ref_test.go). Each test skips when there is no CUDA GPU.
//
// Method: random inputs (seeded, never all zero); every output buffer is
// poisoned with a NaN bit pattern (ktNaN) before the launch so an element a
// kernel fails to write fails the comparison, and a guard region after each
// output must still hold the poison afterwards. Tolerances are stated where
// they are used, with where they come from; u = 2^-24 is the f32 unit
// roundoff.

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/cpu"
	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/engine/sample"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// ktEnv is the GPU and the loaded kernels, shared by the kernel tests of one
// test binary (opening a context and loading the fatbin per test would cost
// more than the tests).
type ktEnv struct {
	e   *cuda.Engine
	mod cuda.Module
	k   *Kernels
	// optin is the shared memory a block may take here (blockShared).
	optin int
	// stageRoom is what a batch launch may stage beside its rings (batchShared).
	stageRoom int
	// room is the tensor-core matvecs' (matvecRoom): a usual kernel too
	// wide for it here (on sm_86 or sm_89) is skipped, not launched.
	room mvRoom
}

// skipUnfit skips t where the matvec kernel of variant does not fit the
// GPU's shared memory at cols columns (the usual K-quant kernels at 12,288
// on sm_86 and sm_89), which Load would never launch there.
func (v *ktEnv) skipUnfit(t *testing.T, variant MatvecVariant, cols int) {
	t.Helper()
	if mk, ok := matvecKernel(variant); ok && mk.TensorCore && mk.Shared(cols, false) > v.room[variant] {
		t.Skipf("%s needs %d bytes of shared memory at %d columns; this GPU allows it %d", mk.Name, mk.Shared(cols, false), cols, v.room[variant])
	}
}

// The shared environment: opened by the first kernel test that runs, closed
// by TestMain. Tests of this package run sequentially (none is parallel), so
// plain variables suffice.
var (
	ktShared  *ktEnv
	ktNoGPU   error // cuda.New failed (no driver, no GPU): the kernel tests skip
	ktLoadErr error // there is a GPU but the kernels did not load: the kernel tests fail
)

func TestMain(m *testing.M) {
	code := m.Run()
	if ktShared != nil {
		_ = ktShared.e.Close() // the process exits next; nothing to report to
	}
	os.Exit(code)
}

// ktGPU returns the shared environment, skipping t when there is no GPU.
func ktGPU(t *testing.T) *ktEnv {
	t.Helper()
	if ktShared == nil && ktNoGPU == nil && ktLoadErr == nil {
		e, err := cuda.New(0)
		switch {
		case err != nil && cuda.NoGPU(err):
			ktNoGPU = err
		case err != nil: // a driver that is there and fails is a failure, not a skip
			ktLoadErr = fmt.Errorf("cuda.New(0): %w", err)
		default:
			mod, err := e.LoadModule(kernels.Fatbin())
			var k *Kernels
			var optin, stage int
			var room mvRoom
			if err == nil {
				k, err = loadKernels(e, mod)
			}
			if err == nil {
				optin, _, err = blockShared(e)
			}
			if err == nil {
				room, err = matvecRoom(e, mod, optin)
			}
			if err == nil {
				// Lets every tensor-core matvec, its lean forms too, use the
				// shared memory of the widest test matrix, as Load does for
				// a model's launches, or what the GPU allows it.
				err = ktAllowTiled(e, mod, room, 12288)
			}
			if err == nil {
				// The batch kernels' staged copies, as Load allows them.
				stage, err = batchShared(e, mod, optin)
			}
			if err != nil {
				_ = e.Close()
				ktLoadErr = fmt.Errorf("load the kernels: %w", err)
			} else {
				ktShared = &ktEnv{e: e, mod: mod, k: k, optin: optin, stageRoom: stage, room: room}
			}
		}
	}
	switch {
	case ktNoGPU != nil:
		t.Skipf("cuda.New(0): %v", ktNoGPU)
	case ktLoadErr != nil:
		t.Fatal(ktLoadErr)
	}
	return ktShared
}

// ktAllowTiled lets every tensor-core matvec kernel take the shared memory
// it needs at cols columns, or the room the GPU gives it where that is
// less, as matvecGrids does for the kernels and widths of a model's
// launches (on an H200 it sends none to the lean forms).
func ktAllowTiled(e *cuda.Engine, mod cuda.Module, room mvRoom, cols int) error {
	for _, mk := range kernels.MatvecKernels() {
		if !mk.TensorCore {
			continue
		}
		fn, err := e.Function(mod, mk.Name)
		if err != nil {
			return err
		}
		allow := min(mk.Shared(cols, false), room[variantOf(mk)])
		if err := e.SetFuncAttribute(fn, cuda.FuncMaxDynamicSharedSizeBytes, allow); err != nil {
			return fmt.Errorf("%s: allow %d bytes of shared memory: %w", mk.Name, allow, err)
		}
	}
	return nil
}

func ktMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// alloc allocates device memory freed when t ends.
func (v *ktEnv) alloc(t *testing.T, bytes int) cuda.DevPtr {
	t.Helper()
	p, err := v.e.Alloc(uint64(max(bytes, 16)))
	if err != nil {
		t.Fatalf("alloc %d bytes: %v", bytes, err)
	}
	t.Cleanup(func() {
		if err := v.e.Free(p); err != nil {
			t.Errorf("free: %v", err)
		}
	})
	return p
}

// poison fills n 32-bit words at p with bits (ktNaN unless a test needs another pattern).
func (v *ktEnv) poison(t *testing.T, p cuda.DevPtr, n int, bits uint32) {
	t.Helper()
	ktMust(t, v.e.MemsetD32Async(p, bits, uint64(n)))
}

// ktPut copies s to p.
func ktPut[T any](t *testing.T, v *ktEnv, p cuda.DevPtr, s []T) {
	t.Helper()
	ktMust(t, v.e.CopyHtoD(p, cuda.AsBytes(s)))
}

// ktUpload allocates device memory for s (plus extra bytes) and copies s there.
func ktUpload[T any](t *testing.T, v *ktEnv, s []T, extra int) cuda.DevPtr {
	t.Helper()
	b := cuda.AsBytes(s)
	p := v.alloc(t, len(b)+extra)
	ktMust(t, v.e.CopyHtoD(p, b))
	return p
}

// ktGet copies n elements from p (after all work queued before it, whose
// errors, such as an illegal address, surface here).
func ktGet[T any](t *testing.T, v *ktEnv, p cuda.DevPtr, n int) []T {
	t.Helper()
	out := make([]T, n)
	if err := v.e.CopyDtoH(cuda.AsBytes(out), p); err != nil {
		t.Fatalf("read back %d elements: %v", n, err)
	}
	return out
}

// ktCounters uploads a struct memra_counters {token, pos, t_kv, step} (int32
// at the byte offsets kernels.Counter*) and returns its address.
func ktCounters(t *testing.T, v *ktEnv, token, pos, tkv, step int32) cuda.DevPtr {
	t.Helper()
	p := v.alloc(t, kernels.CountersBytes)
	ktSetCounters(t, v, p, token, pos, tkv, step)
	return p
}

func ktSetCounters(t *testing.T, v *ktEnv, p cuda.DevPtr, token, pos, tkv, step int32) {
	t.Helper()
	c := make([]int32, kernels.CountersBytes/4)
	c[kernels.CounterToken/4] = token
	c[kernels.CounterPos/4] = pos
	c[kernels.CounterTKV/4] = tkv
	c[kernels.CounterStep/4] = step
	ktPut(t, v, p, c)
}

// ktTensor quantises src ([rows][cols] f32) to typ with gguf.Quantize, as a
// model tensor of ggml shape {cols, rows}.
func ktTensor(t *testing.T, name string, typ gguf.Type, src []float32, cols, rows int) *model.Tensor {
	t.Helper()
	rb, err := gguf.RowBytes(typ, int64(cols))
	ktMust(t, err)
	data := make([]byte, int(rb)*rows)
	for r := range rows {
		ktMust(t, gguf.Quantize(typ, src[r*cols:(r+1)*cols], data[r*int(rb):(r+1)*int(rb)]))
	}
	return &model.Tensor{Name: name, Type: typ, Shape: []int{cols, rows}, Data: data}
}

// ktDequant returns every row of w as f32 through the CPU backend's
// DequantizeRow: the exact values the kernels read (f16, bf16 and q8_0's d·q
// all convert exactly to f32).
func ktDequant(t *testing.T, w *model.Tensor) []float32 {
	t.Helper()
	cols, rows := w.Cols(), w.Rows()
	out := make([]float32, cols*rows)
	for r := range rows {
		ktMust(t, cpu.DequantizeRow(out[r*cols:(r+1)*cols], w, r))
	}
	return out
}

// ktWeights uploads w in its device layout (q8_0 split as upload does:
// payloads at q, f16 scales at s, in lane order with lane; the K-quants
// tiled; otherwise s is 0), q placed off bytes past a 16-byte boundary to
// reach the kernels' unaligned paths.
func ktWeights(t *testing.T, v *ktEnv, w *model.Tensor, off int, lane bool) (q, s cuda.DevPtr) {
	t.Helper()
	if l, ok := tileOf(w.Type); ok {
		tiles := l.Tile(w.Data, w.Rows(), w.Cols())
		p := v.alloc(t, len(tiles)+16)
		ktMust(t, v.e.CopyHtoD(p.Add(uint64(off)), tiles))
		return p.Add(uint64(off)), 0
	}
	l, ok := splitOf(w.Type)
	if !ok {
		p := v.alloc(t, len(w.Data)+16)
		ktMust(t, v.e.CopyHtoD(p.Add(uint64(off)), w.Data))
		return p.Add(uint64(off)), 0
	}
	n := len(w.Data) / l.block
	qb, sb := make([]byte, l.payload()*n), make([]byte, 2*n)
	l.repack(qb, sb, w.Data)
	if lane {
		cols := w.Cols()
		_, lsb := l.rowBytes(cols, true)
		_, psb := l.rowBytes(cols, false)
		ls := make([]byte, w.Rows()*lsb)
		for r := range w.Rows() {
			kernels.Q8LaneOrder(ls[r*lsb:(r+1)*lsb], sb[r*psb:(r+1)*psb], cols)
		}
		sb = ls
	}
	p := v.alloc(t, len(qb)+16)
	ktMust(t, v.e.CopyHtoD(p.Add(uint64(off)), qb))
	return p.Add(uint64(off)), ktUpload(t, v, sb, 0)
}

// TestGPUKernelEmbed: embed_{f32,f16,bf16,q8_0,q4_k,q5_k,q6_k,q3_k,iq4_xs,q4_0,iq4_nl} for host and
// device tokens must equal the CPU's DequantizeRow bit for bit (a gather plus
// an exact conversion; the K-quants decode in the CPU's order of operations,
// kquant.cuh), and an out-of-range token must give NaN in every element;
// a chunk's launch of several device tokens (grid rows) must write each
// token's row at its stride, out-of-range ones NaN, and nothing between.
func TestGPUKernelEmbed(t *testing.T) {
	v := ktGPU(t)
	// 1056 = 33 q8_0 blocks, 4⅛ blocks of 256 threads; the K-quants need
	// whole superblocks: 1280 = 5.
	const nVocab, guard = 37, 64
	src := ktUniform(ktRand(1), nVocab*1280, -2, 2)
	type embedFn func(x, table, scales cuda.DevPtr, nEmbd, nVocab, token int32, dtoken cuda.DevPtr, n, xStride int32) error
	unscaled := func(f func(x, table cuda.DevPtr, nEmbd, nVocab, token int32, dtoken cuda.DevPtr, n, xStride int32) error) embedFn {
		return func(x, table, _ cuda.DevPtr, nEmbd, nVocab, token int32, dtoken cuda.DevPtr, n, xStride int32) error {
			return f(x, table, nEmbd, nVocab, token, dtoken, n, xStride)
		}
	}
	for _, tc := range []struct {
		typ   gguf.Type
		fn    embedFn
		nEmbd int
	}{
		{gguf.TypeF32, unscaled(v.k.EmbedF32), 1056}, {gguf.TypeF16, unscaled(v.k.EmbedF16), 1056},
		{gguf.TypeBF16, unscaled(v.k.EmbedBF16), 1056}, {gguf.TypeQ8_0, v.k.EmbedQ8_0, 1056},
		{gguf.TypeQ4_K, unscaled(v.k.EmbedQ4K), 1280}, {gguf.TypeQ5_K, unscaled(v.k.EmbedQ5K), 1280},
		{gguf.TypeQ6_K, unscaled(v.k.EmbedQ6K), 1280}, {gguf.TypeQ3_K, unscaled(v.k.EmbedQ3K), 1280},
		{gguf.TypeIQ4_XS, unscaled(v.k.EmbedIQ4XS), 1280}, {gguf.TypeQ4_0, unscaled(v.k.EmbedQ4_0), 1280},
		{gguf.TypeIQ4_NL, unscaled(v.k.EmbedIQ4NL), 1280},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			nEmbd := tc.nEmbd
			w := ktTensor(t, "token_embd.weight", tc.typ, src[:nVocab*nEmbd], nEmbd, nVocab)
			table, scales := ktWeights(t, v, w, 0, false)
			x := v.alloc(t, (nEmbd+guard)*4)
			ctr := ktCounters(t, v, 0, 0, 0, 0)
			run := func(name string, host, dev int32, useDev bool, fill uint32) []float32 {
				t.Helper()
				v.poison(t, x, nEmbd+guard, fill)
				dtoken := cuda.DevPtr(0)
				if useDev {
					ktSetCounters(t, v, ctr, dev, 0, 0, 0)
					dtoken = ctr.Add(kernels.CounterToken)
				}
				ktMust(t, tc.fn(x, table, scales, int32(nEmbd), nVocab, host, dtoken, 1, 0))
				got := ktGet[float32](t, v, x, nEmbd+guard)
				ktCheckPoison(t, name+" guard", got[nEmbd:], fill)
				return got[:nEmbd]
			}
			want := make([]float32, nEmbd)
			for _, c := range []struct {
				host, dev int32
				useDev    bool
			}{
				{0, 0, false}, {17, 0, false}, {nVocab - 1, 0, false},
				{0, nVocab - 1, true}, {nVocab - 1, 5, true}, // the device token wins over the host one
			} {
				tok := c.host
				if c.useDev {
					tok = c.dev
				}
				name := fmt.Sprintf("token %d (host %d, device %v)", tok, c.host, c.useDev)
				got := run(name, c.host, c.dev, c.useDev, ktNaN)
				ktMust(t, cpu.DequantizeRow(want, w, int(tok)))
				ktCheckBits(t, name, got, want)
			}
			// Out of range: every element NaN. Poison with a finite pattern
			// (1.1f) here, since the kernel's NaN equals ktNaN.
			for _, c := range []struct {
				host, dev int32
				useDev    bool
			}{{nVocab, 0, false}, {-1, 0, false}, {3, nVocab, true}, {3, -7, true}} {
				name := fmt.Sprintf("out-of-range token (host %d, device %d used %v)", c.host, c.dev, c.useDev)
				got := run(name, c.host, c.dev, c.useDev, 0x3f8ccccd)
				for i, g := range got {
					if !math.IsNaN(float64(g)) {
						t.Fatalf("%s: x[%d] = %v, want NaN", name, i, g)
					}
				}
			}
			// A chunk's launch: 5 device tokens, one out of range.
			ids := []int32{3, nVocab - 1, 0, nVocab, 17}
			stride := nEmbd + guard
			dids := ktUpload(t, v, ids, 0)
			xs := v.alloc(t, len(ids)*stride*4)
			v.poison(t, xs, len(ids)*stride, 0x3f8ccccd)
			ktMust(t, tc.fn(xs, table, scales, int32(nEmbd), nVocab, 99, dids, int32(len(ids)), int32(stride)))
			all := ktGet[float32](t, v, xs, len(ids)*stride)
			for k, id := range ids {
				got := all[k*stride : (k+1)*stride]
				name := fmt.Sprintf("chunk token %d (%d)", k, id)
				ktCheckPoison(t, name+" guard", got[nEmbd:], 0x3f8ccccd)
				if id >= nVocab {
					for i, g := range got[:nEmbd] {
						if !math.IsNaN(float64(g)) {
							t.Fatalf("%s: x[%d] = %v, want NaN", name, i, g)
						}
					}
					continue
				}
				ktMust(t, cpu.DequantizeRow(want, w, int(id)))
				ktCheckBits(t, name, got[:nEmbd], want)
			}
		})
	}
}

// TestGPUKernelRMSNorm checks rmsnorm against cpu.RMSNorm per row, with the
// strides decode uses (q read out of the interleaved q|gate rows: x_stride
// 2·Dh, out_stride Dh), gaps between output rows (must stay unwritten), a
// 4096-wide layer norm, no weight (w = null means 1), and in place.
//
// Tolerance, per element relative: the kernel's sum of squares is a tree of
// n/256 sequential adds per thread, 5 butterfly levels and 8 warp sums, all
// positive terms, so its relative error is ≤ (n/256+13)·u; the inverse sqrt
// halves that and adds 2 roundings, the products 2 more; the reference
// (float64 sum, f32 products) adds 3. (n/256+32)·u covers it all.
func TestGPUKernelRMSNorm(t *testing.T) {
	v := ktGPU(t)
	const eps, guard = 1e-6, 32
	for i, tc := range []struct {
		name                      string
		rows, n, xStride, oStride int
		weight, inPlace           bool
	}{
		{"q-from-qgate", 16, 256, 512, 256, true, false},
		{"k-heads", 2, 256, 256, 256, true, false},
		{"layer-4096", 1, 4096, 4096, 4096, true, false},
		{"odd-gaps", 3, 100, 107, 103, true, false},
		{"no-weight", 4, 128, 128, 128, false, false},
		{"in-place", 8, 256, 256, 256, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ktRand(uint64(10 + i))
			x := ktUniform(r, tc.rows*tc.xStride, -2, 2)
			w := ktUniform(r, tc.n, 0.5, 1.5)
			dx := ktUpload(t, v, x, guard*4)
			v.poison(t, dx.Add(uint64(len(x)*4)), guard, ktNaN)
			dw := cuda.DevPtr(0)
			if tc.weight {
				dw = ktUpload(t, v, w, 0)
			} else {
				for j := range w {
					w[j] = 1
				}
			}
			out, outLen := dx, len(x)
			if !tc.inPlace {
				outLen = tc.rows * tc.oStride
				out = v.alloc(t, (outLen+guard)*4)
				v.poison(t, out, outLen+guard, ktNaN)
			}
			ktMust(t, v.k.RMSNorm(out, dx, dw, int32(tc.rows), int32(tc.n), int32(tc.xStride), int32(tc.oStride), eps))
			got := ktGet[float32](t, v, out, outLen+guard)
			ktCheckPoison(t, "guard", got[outLen:], ktNaN)
			want := make([]float32, tc.n)
			for row := range tc.rows {
				cpu.RMSNorm(want, x[row*tc.xStride:row*tc.xStride+tc.n], w, eps)
				g := got[row*tc.oStride : row*tc.oStride+tc.n]
				tol := float64(tc.n/256+32) * ktU
				ktCheckElems(t, fmt.Sprintf("row %d", row), g, ktF64(want), func(i int) float64 { return tol * math.Abs(float64(want[i])) })
				if !tc.inPlace && tc.oStride > tc.n {
					ktCheckPoison(t, fmt.Sprintf("gap after row %d", row), got[row*tc.oStride+tc.n:(row+1)*tc.oStride], ktNaN)
				}
			}
		})
	}
}

// TestGPUKernelRMSNormGated checks rmsnorm_gated (the Gated DeltaNet output
// norm, rows = H_v heads of 128) against cpu.GatedRMSNorm per row. Tolerance
// per element: RMSNorm's (n/256+32)·u plus silu, where the kernel's expf (≤ 2
// ulp, CUDA programming guide, no fast math) and the reference's rounded
// float64 exp differ by a few ulp: (n/256+48)·u relative.
func TestGPUKernelRMSNormGated(t *testing.T) {
	v := ktGPU(t)
	const eps, guard = 1e-6, 32
	for i, tc := range []struct{ rows, n int }{{4, 128}, {32, 128}, {3, 1000}} {
		t.Run(fmt.Sprintf("%dx%d", tc.rows, tc.n), func(t *testing.T) {
			r := ktRand(uint64(20 + i))
			x := ktUniform(r, tc.rows*tc.n, -2, 2)
			z := ktUniform(r, tc.rows*tc.n, -4, 4)
			w := ktUniform(r, tc.n, 0.5, 1.5)
			dx, dz, dw := ktUpload(t, v, x, 0), ktUpload(t, v, z, 0), ktUpload(t, v, w, 0)
			n := tc.rows * tc.n
			out := v.alloc(t, (n+guard)*4)
			v.poison(t, out, n+guard, ktNaN)
			ktMust(t, v.k.RMSNormGated(out, dx, dw, dz, int32(tc.rows), int32(tc.n), eps))
			got := ktGet[float32](t, v, out, n+guard)
			ktCheckPoison(t, "guard", got[n:], ktNaN)
			want := make([]float32, n)
			for row := range tc.rows {
				o := row * tc.n
				cpu.GatedRMSNorm(want[o:o+tc.n], x[o:o+tc.n], z[o:o+tc.n], w, eps)
			}
			tol := float64(tc.n/256+48) * ktU
			ktCheckElems(t, "out", got[:n], ktF64(want), func(i int) float64 { return tol * math.Abs(float64(want[i])) })
		})
	}
}

// TestGPUMatvecSharedLimit: a K-quant matrix too wide for the tensor-core
// kernel that would run it (its copy of x and ring of tiles: cols·4 +
// cols/8 + 8·S·tile bytes of shared memory per block, 227 KiB at most on
// sm_90) runs the kernel's lean form (one slot a warp), and one too wide for
// that too must fail the load with an error that names the matrix, its
// width and the limit, not a launch failure in the first step; a width is
// checked only against the kernels of its type that MatvecWide can pick
// for it.
func TestGPUMatvecSharedLimit(t *testing.T) {
	v := ktGPU(t)
	mod, err := v.e.LoadModule(kernels.Fatbin())
	ktMust(t, err)
	defer v.e.UnloadModule(mod)
	const name = "blk.0.ffn_down.weight"
	optin, _, err := blockShared(v.e) // the GPU's, or MEMRA_SHARED_LIMIT's
	ktMust(t, err)
	shapes := func(typ gguf.Type, rows, cols int) tiledShapes {
		ts := tiledShapes{}
		ts.add(typ, 4096, 4096, "blk.0.ffn_up.weight")
		ts.add(typ, rows, cols, name)
		return ts
	}
	for _, typ := range []gguf.Type{gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ3_K, gguf.TypeIQ4_XS, gguf.TypeQ4_0, gguf.TypeIQ4_NL} {
		_, _, err = matvecGrids(v.e, mod, optin, 1024, shapes(typ, 4096, 61440))
		if err == nil {
			t.Fatalf("%v: 61,440 columns accepted", typ)
		}
		for _, want := range []string{name, "61440 columns", "shared memory", "allows", "_lean"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%v: error %q does not say %q", typ, err, want)
			}
		}
		if _, _, err := matvecGrids(v.e, mod, optin, 1024, shapes(typ, 1024, 12288)); err != nil {
			t.Errorf("%v: 12,288 columns (the 9B down projection) on 1,024 rows, both kernels: %v", typ, err)
		}
	}
	// A plain kernel's widest matrix (one of many rows) loads on the plain
	// kernel, 256 columns more on its lean form, up to the lean form's
	// widest; past that it fails. One of few rows (the wide kernel, and the
	// plain one for the fused launches it may be part of) loads exactly
	// when both take it in one form or the other.
	need := func(typ gguf.Type, wide, lean, cols int) int {
		mk, ok := matvecKernel(MatvecVariant{GgmlType: int(typ), Wide: wide, Lean: lean})
		if !ok {
			t.Fatalf("%v: no kernel wide=%d lean=%d", typ, wide, lean)
		}
		fn, err := v.e.Function(mod, mk.Name)
		ktMust(t, err)
		static, err := v.e.FuncAttribute(fn, cuda.FuncSharedSizeBytes)
		ktMust(t, err)
		return mk.Shared(cols, false) + static
	}
	for _, typ := range []gguf.Type{gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ3_K, gguf.TypeIQ4_XS, gguf.TypeQ4_0, gguf.TypeIQ4_NL} {
		widest := func(wide, lean int) int {
			w := 256
			for need(typ, wide, lean, w+256) <= optin {
				w += 256
			}
			return w
		}
		plain, plainLean := widest(0, 0), widest(0, 1)
		if plainLean <= plain {
			t.Errorf("%v: the lean kernel's widest %d columns, the plain one's %d", typ, plainLean, plain)
		}
		for _, c := range []struct{ cols, lean int }{{plain, 0}, {plain + 256, 1}, {plainLean, 1}} {
			_, room, err := matvecGrids(v.e, mod, optin, 1024, shapes(typ, 8192, c.cols))
			if err != nil {
				t.Errorf("%v: %d columns on 8,192 rows: %v", typ, c.cols, err)
				continue
			}
			if got, ok := room.variant(typ, 0, c.cols); !ok || got.Lean != c.lean {
				t.Errorf("%v: %d columns on 8,192 rows run %+v (%v), want lean %d", typ, c.cols, got, ok, c.lean)
			}
		}
		if _, _, err := matvecGrids(v.e, mod, optin, 1024, shapes(typ, 8192, plainLean+256)); err == nil {
			t.Errorf("%v: %d columns on 8,192 rows accepted, past the lean kernel's widest", typ, plainLean+256)
		}
		fits := func(wide, cols int) bool {
			return need(typ, wide, 0, cols) <= optin || need(typ, wide, 1, cols) <= optin
		}
		for _, cols := range []int{plain, plainLean, widest(1, 1), max(plainLean, widest(1, 1)) + 256} {
			_, _, err := matvecGrids(v.e, mod, optin, 1024, shapes(typ, 1024, cols))
			if want := fits(0, cols) && fits(1, cols); (err == nil) != want {
				t.Errorf("%v: %d columns on 1,024 rows: error %v, though the plain and wide kernels fit: %v", typ, cols, err, want)
			}
		}
		t.Logf("%v: widest rows, plain kernel %d columns, its lean form %d; the wide kernel's lean form %d (of %d bytes)", typ,
			plain, plainLean, widest(1, 1), optin)
	}
}

// TestGPUKernelMatvec checks every kernel of the matvec family (f32, f16,
// bf16, q8_0, Q3_K, Q4_K, Q5_K, Q6_K, plain, wide, wave and lean) in modes store, accumulate and SwiGLU, with and
// without the fused norm, over shapes that take every path of matvec.cu:
// 16-byte loads (cols a multiple of 4 for f32, 8 for f16/bf16, 16 for q8_0's
// repacked quants), the leftover loop (chunks not a multiple of the unrolled
// step), element-wise loads (odd cols, cols ≡ 4 mod 8 for the 16-bit types,
// misaligned W/x), rows not a multiple of the rows per block, rows past the
// end of the last row group, and grids of one block per row unit or of 3
// blocks that loop over the units.
//
// Reference: the float64 dot product of the SAME quantised weights
// (dequantised exactly by the CPU's DequantizeRow), so the tolerance is f32
// accumulation only, per row: a lane adds at most cols/32 chunk results in
// sequence (a q8_0 chunk: 16 products, then d·), then 5 butterfly levels, up
// to 8 warp partials, then the optional add into y; γ bound: |gpu − ref| ≤
// (cols/32+48)·u·(Σ|w_i x_i| + |y0|), measured for the K-quants against
// Σ(|a·q|+|m|)·|x| (modeltest.KQuantMag) since their kernels never form
// a·q − m. The Q4_K and Q5_K tensor-core kernels (matvec_q4k.cu; Q5_K's
// codes 0..31 are as exact in f16 as Q4_K's) take x as hi + lo f16, x' to within
// 2^-22 = 4 u (mma.cuh), and add per row: two mma of 16 products into one
// accumulator per run of 32, 33 additions, each counted as 2 u since neither
// the tensor core's order nor its rounding is specified (66), then the six
// mma of the other runs that share the accumulator and add exact zeros to
// this run's columns, counted as 2 u each all the same (12); D0 + D1, the
// scale's product and the sum of the lane's two runs (3; the min's path, the
// run sums X_j of 64 halves times m over 2 runs, is shorter: 67); then d· or
// dmin·, the difference, the lane's sum over its cols/256/KW superblocks,
// the quad's four lanes (2), up to 8 warp partials and the add into y:
// ≤ 81 + 2 + cols/256 + 2 + 8 + 1 + 4 steps, used where it exceeds cols/32+48
// (below ~1,830 columns). Q6_K's (matvec_q6k.cu) fit the same count: per
// sub-block of 16 columns two mma of 16 products (nibble − 32 and 16·high
// bits, each term within |q − 32| + 32 of |x|, so KQuantMag's |a·q| + |m|
// bounds them) into one accumulator, 33 additions (66), the 6 mma of the
// other sub-blocks adding zeros (12), D0 + D1, the scale's product and the
// lane's 4 sub-blocks (5), then d· (1: one more than Q4_K's 3 + 2, hence the
// +1 below), and the rest as Q4_K's. Q3_K's (matvec_q6k.cu's Q3 forms)
// take one mma a sub-block, of the codes −4..3 (terms within |w|·|x|), so
// fewer steps than Q6_K's. The
// reference's own rounding of a·q − m (1–2 u per weight) fits the slack. The CPU backend's cpu.MatVec (8 f32
// partial sums of cols/8 terms) must agree within the sum of both bounds.
func TestGPUKernelMatvec(t *testing.T) {
	v := ktGPU(t)
	all := []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0}
	unq := []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16}
	kq := []gguf.Type{gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ3_K, gguf.TypeIQ4_XS, gguf.TypeQ4_0, gguf.TypeIQ4_NL} // cols % 256 == 0
	allK := append(slices.Clone(all), kq...)
	unaligned := slices.DeleteFunc(slices.Clone(allK), tiled)
	for i, sh := range []struct {
		rows, cols int
		types      []gguf.Type
		misalign   bool // W and x 4 bytes (q8_0 quants: 2 bytes) past a 16-byte boundary
	}{
		{4096, 4096, allK, false},
		{1003, 1024, allK, false},
		{17, 2304, allK, false},     // q8_0: 144 chunks, leftover after the unrolled loop; K: 9 superblocks, fewer than some KW split
		{1003, 1056, all, false},    // 66 16-byte q8_0 chunks
		{64, 1024, unaligned, true}, // the element-wise fallback (not the K-quants: their tiles are aligned, and matvec refuses a misaligned x, TestMatvecNeedsAlignedInput)
		{37, 12288, kq, false},      // 48 superblocks a row: the widest x a block stages here
		{2050, 512, kq, false},      // 2 superblocks a row: most warps of a row idle; a partial last unit
		{33, 256, kq, false},        // one superblock per row: every warp of a row but the first idle
		{67, 1001, unq, false},      // odd cols
		{33, 4100, unq, false},      // f32 vector, 16-bit scalar (4100 % 8 = 4)
		{9, 7, unq, false},
		{5, 32, all, false},
		{2050, 96, all, false}, // odd row groups in both wide and plain kernels
		// q8_0's lane-ordered scales (matvec_q8_0_wide): 3 trips a lane pair
		// (odd: padded rows, the last trip's scale alone), the 0.8B down
		// width (112 blocks: pairs of 1 and 2 trips), and the element-wise
		// path reading lane order (2 trips).
		{40, 6144, all, false},
		{33, 8192, all, false}, // 4 trips: a pair's second word (trips 2 and 3)
		{100, 3584, all, false},
		{64, 4096, unaligned, true},
	} {
		for _, typ := range sh.types {
			for _, variant := range MatvecVariants() {
				if variant.GgmlType != int(typ) {
					continue
				}
				// One block per row unit, and 3 blocks looping over the units
				// (the persistent grid the engine launches on big matrices).
				units := matvecUnits(variant, sh.rows)
				for _, blocks := range []int{units, min(3, units)} {
					name := fmt.Sprintf("%s-wide%d-%dx%d-blocks%d", typ, variant.Wide, sh.rows, sh.cols, blocks)
					if variant.Lean != 0 {
						name = strings.Replace(name, "-", "-lean-", 1)
					}
					if sh.misalign {
						name += "-misaligned"
					}
					t.Run(name, func(t *testing.T) {
						v.skipUnfit(t, variant, sh.cols)
						ktMatvecCase(t, v, variant, typ, sh.rows, sh.cols, sh.misalign, blocks, uint64(100*i)+uint64(typ))
					})
				}
			}
		}
	}
}

func ktMatvecCase(t *testing.T, v *ktEnv, variant MatvecVariant, typ gguf.Type, rows, cols int, misalign bool, blocks int, seed uint64) {
	r := ktRand(seed)
	src := ktUniform(r, rows*cols, -1, 1)
	xs := ktUniform(r, cols, -1, 1)
	y0 := ktUniform(r, rows, -4, 4)
	w := ktTensor(t, "w", typ, src, cols, rows)
	deq := ktDequant(t, w)

	woff, xoff := 0, 0
	if misalign {
		woff, xoff = 4, 4
		if typ == gguf.TypeQ8_0 {
			woff = 2
		}
	}
	dw, ds := ktWeights(t, v, w, woff, variant.GgmlType == int(gguf.TypeQ8_0) && variant.Wide != 0)
	dx := v.alloc(t, len(xs)*4+16)
	ktMust(t, v.e.CopyHtoD(dx.Add(uint64(xoff)), cuda.AsBytes(xs)))
	dx = dx.Add(uint64(xoff))
	const guard = 16
	dy := v.alloc(t, (rows+guard)*4)
	run := func(mode int32, norm cuda.DevPtr, xnorm int32) {
		t.Helper()
		ktMust(t, v.k.Matvec(variant, dy, dw, ds, dx, int32(rows), int32(cols), mode, norm, xnorm, 1e-6, blocks))
	}

	// mag bounds the size of the terms a weight's product is made of: |w|,
	// or for the K-quants, which the kernels sum as a·Σq·x − m·Σx per run of
	// 16 (kquant.cuh), |a·q| + |m| (modeltest.KQuantMag).
	mag := modeltest.KQuantMag(typ, w.Data, deq)
	dot := make([]float64, rows)
	abs := make([]float64, rows)
	for row := range rows {
		wr := deq[row*cols : (row+1)*cols]
		for c, xv := range xs {
			p := float64(wr[c]) * float64(xv)
			dot[row] += p
			abs[row] += mag[row*cols+c] * math.Abs(float64(xv))
		}
	}
	// The fused-norm input: x' = x / sqrt(mean(x²) + eps) · nw, in float64.
	const normEps = 1e-6
	nw := ktUniform(r, cols, 0.5, 1.5)
	var ss float64
	for _, xv := range xs {
		ss += float64(xv) * float64(xv)
	}
	inv := 1 / math.Sqrt(ss/float64(cols)+normEps)
	dotN := make([]float64, rows)
	absN := make([]float64, rows)
	for row := range rows {
		wr := deq[row*cols : (row+1)*cols]
		for c, xv := range xs {
			p := float64(wr[c]) * float64(xv) * inv * float64(nw[c])
			dotN[row] += p
			absN[row] += mag[row*cols+c] * math.Abs(float64(xv)*inv*float64(nw[c]))
		}
	}
	dnw := v.alloc(t, len(nw)*4)
	ktMust(t, v.e.CopyHtoD(dnw, cuda.AsBytes(nw)))
	cpuY := make([]float32, rows)
	ktMust(t, cpu.MatVec(nil, cpuY, w, xs))
	gpuDepth := float64(cols/32 + 48)
	if tiled(typ) {
		gpuDepth = max(gpuDepth, float64(81+2+cols/256+2+8+1+4+1))
	}
	cpuDepth := float64(cols/8 + 16)
	if w.Type.BlockSize() == 256 {
		// cpu.dotBlocks: two partial sums of 128 products per superblock,
		// then a running sum over the superblocks.
		cpuDepth = max(cpuDepth, float64(128+cols/256+2))
	}

	for _, mode := range []int32{mvStore, mvAccumulate} {
		v.poison(t, dy, rows+guard, ktNaN)
		if mode == mvAccumulate {
			ktPut(t, v, dy, y0)
		}
		run(mode, 0, 0)
		got := ktGet[float32](t, v, dy, rows+guard)
		ktCheckPoison(t, "y guard", got[rows:], ktNaN)
		got = got[:rows]
		want := make([]float64, rows)
		base := make([]float64, rows)
		for row := range want {
			want[row] = dot[row]
			if mode == mvAccumulate {
				want[row] += float64(y0[row])
				base[row] = math.Abs(float64(y0[row]))
			}
		}
		what := fmt.Sprintf("mode %d", mode)
		ktCheckElems(t, what+" vs float64", got, want, func(i int) float64 {
			return gpuDepth * ktU * (abs[i] + base[i])
		})
		cpuWant := make([]float64, rows)
		for row := range cpuWant {
			cpuWant[row] = float64(cpuY[row])
			if mode == mvAccumulate {
				cpuWant[row] = float64(cpuY[row] + y0[row])
			}
		}
		ktCheckElems(t, what+" vs cpu.MatVec", got, cpuWant, func(i int) float64 {
			return (gpuDepth + cpuDepth + 2) * ktU * (abs[i] + base[i])
		})
		e, _ := ktRelErr(got, want)
		t.Logf("%s: max|gpu−ref|/max|ref| = %.3g", what, e)
	}
	// SwiGLU epilogue: y[i] = silu(row 2i) · row 2i+1.
	swiglu := func(what string, norm cuda.DevPtr, xnorm int32, dot, abs []float64, depth float64) {
		t.Helper()
		if rows < 2 {
			return
		}
		half := rows / 2
		v.poison(t, dy, rows+guard, ktNaN)
		run(mvSwiGLU, norm, xnorm)
		got := ktGet[float32](t, v, dy, rows+guard)
		ktCheckPoison(t, "y guard ("+what+")", got[half:], ktNaN)
		want, tol := ktSwiGLUWant(dot, abs, depth*ktU)
		ktCheckElems(t, what+" vs float64", got[:half], want, func(i int) float64 { return tol[i] })
	}
	swiglu("swiglu", 0, 0, dot, abs, gpuDepth)
	if cols > maxFusedNormCols {
		return // the engine never fuses the norm into so wide an input (its copy would not fit)
	}
	// Norm fused in (xnorm = 1), with each epilogue: the block's sum of
	// squares adds cols/256+8 rounding steps to each input (thread partials,
	// butterfly, 8 warp sums), and the scale and the weight two more products.
	normDepth := gpuDepth + float64(cols/256+8) + 4
	for _, mode := range []int32{mvStore, mvAccumulate} {
		v.poison(t, dy, rows+guard, ktNaN)
		base := make([]float64, rows)
		want := slices.Clone(dotN)
		if mode == mvAccumulate {
			ktPut(t, v, dy, y0)
			for row := range want {
				want[row] += float64(y0[row])
				base[row] = math.Abs(float64(y0[row]))
			}
		}
		run(mode, dnw, 1)
		got := ktGet[float32](t, v, dy, rows+guard)
		ktCheckPoison(t, "y guard (xnorm)", got[rows:], ktNaN)
		ktCheckElems(t, fmt.Sprintf("xnorm mode %d vs float64", mode), got[:rows], want, func(i int) float64 {
			return normDepth * ktU * (absN[i] + base[i])
		})
	}
	swiglu("xnorm swiglu", dnw, 1, dotN, absN, normDepth)
}

// ktSwiGLUWant is the SwiGLU of row pairs (g, u) = (dot[2i], dot[2i+1]) in
// float64 and its tolerance, where each dot may be off by rel·abs (its
// bound, δg and δu): silu's slope is below 1.1, so |Δ| ≤ 1.1·δg·|u| +
// |silu(g)|·δu + δg·δu, plus 8 roundings of the silu and the product.
func ktSwiGLUWant(dot, abs []float64, rel float64) (want, tol []float64) {
	half := len(dot) / 2
	want, tol = make([]float64, half), make([]float64, half)
	for i := range half {
		g, u := dot[2*i], dot[2*i+1]
		silu := g / (1 + math.Exp(-g))
		want[i] = silu * u
		dg, du := rel*abs[2*i], rel*abs[2*i+1]
		tol[i] = 1.1*dg*math.Abs(u) + math.Abs(silu)*du + dg*du + 8*ktU*math.Abs(want[i])
	}
	return want, tol
}

// TestGPUKernelMatvecLean: a lean matvec kernel (one ring slot a warp,
// matvec_lean.cu) gives the bits of the kernel it stands in for, which it
// must, or a GPU with less shared memory would decode other tokens: the
// plain kernel's for the plain lean form, the wide and wave kernels' for the
// wide one (the ring does not enter the sums). Random weights and inputs,
// every mode, with and without the fused norm, on a grid of one block a unit
// and on one of 3 blocks that loop over the units and so refill the slot
// across units.
func TestGPUKernelMatvecLean(t *testing.T) {
	v := ktGPU(t)
	for i, sh := range []struct{ rows, cols int }{
		{1003, 1024}, {37, 12288}, {2050, 512}, {33, 256}, {4096, 4096}, {17, 2304},
	} {
		for _, typ := range []gguf.Type{gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ3_K, gguf.TypeIQ4_XS, gguf.TypeQ4_0, gguf.TypeIQ4_NL} {
			r := ktRand(uint64(1000+10*i) + uint64(typ))
			w := ktTensor(t, "w", typ, ktUniform(r, sh.rows*sh.cols, -1, 1), sh.cols, sh.rows)
			dw, _ := ktWeights(t, v, w, 0, false)
			dx := v.alloc(t, sh.cols*4)
			ktPut(t, v, dx, ktUniform(r, sh.cols, -1, 1))
			dnw := v.alloc(t, sh.cols*4)
			ktPut(t, v, dnw, ktUniform(r, sh.cols, 0.5, 1.5))
			y0 := ktUniform(r, sh.rows, -4, 4)
			dy := v.alloc(t, sh.rows*4)
			for _, usual := range MatvecVariants() {
				if usual.GgmlType != int(typ) || usual.Lean != 0 {
					continue
				}
				if mk, _ := matvecKernel(usual); mk.Shared(sh.cols, false) > v.room[usual] {
					t.Logf("%s at %d columns: not on this GPU (room %d bytes), nothing to compare", mk.Name, sh.cols, v.room[usual])
					continue
				}
				lean := leanOf(usual)
				units := matvecUnits(usual, sh.rows)
				if lu := matvecUnits(lean, sh.rows); lu != units {
					t.Fatalf("%+v: %d units, its lean form %+v %d", usual, units, lean, lu)
				}
				for _, blocks := range []int{units, min(3, units)} {
					for _, mode := range []int32{mvStore, mvAccumulate, mvSwiGLU} {
						for _, xnorm := range []int32{0, 1} {
							if xnorm == 1 && sh.cols > maxFusedNormCols {
								continue
							}
							run := func(k MatvecVariant) []float32 {
								v.poison(t, dy, sh.rows, ktNaN)
								if mode == mvAccumulate {
									ktPut(t, v, dy, y0)
								}
								norm := cuda.DevPtr(0)
								if xnorm == 1 {
									norm = dnw
								}
								ktMust(t, v.k.Matvec(k, dy, dw, 0, dx, int32(sh.rows), int32(sh.cols), mode, norm, xnorm, 1e-6, blocks))
								return ktGet[float32](t, v, dy, sh.rows)
							}
							want, got := run(usual), run(lean)
							for row := range want {
								if math.Float32bits(got[row]) != math.Float32bits(want[row]) {
									t.Errorf("%v %d×%d wide %d blocks %d mode %d xnorm %d: row %d lean %g, usual %g", typ, sh.rows,
										sh.cols, usual.Wide, blocks, mode, xnorm, row, got[row], want[row])
									break
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestGPUKernelRoPE checks rope_neox against cpu.RopeCosSin + cpu.RoPE for
// qwen35's partial rotary (head_dim 256, n_rot 64), full rotary (128/128),
// n_rot/2 larger than the 64 threads of a block, a large position, and the
// position read from the device counter (the host value is then wrong on
// purpose). Dims past n_rot must come back bit-identical.
//
// Tolerance per element: both sides take cos/sin of the same float64 angle
// rounded once to f32, which may differ by 1 f32 ulp (CUDA's and Go's
// float64 pow/sincos are within 2 float64 ulp); the rotation is 2 products
// and a sum (the GPU may fuse one into an FMA): |diff| ≤ 8·u·(|x0|+|x1|) of
// the pair.
func TestGPUKernelRoPE(t *testing.T) {
	v := ktGPU(t)
	for i, tc := range []struct {
		heads, dh, nRot, pos int
		base                 float32
	}{
		{8, 256, 64, 12345, 1e7},
		{2, 256, 64, 0, 1e7},
		{2, 128, 128, 7, 1e6},
		{16, 256, 64, 262143, 1e7},
		{4, 256, 256, 33, 1e4},
		{3, 64, 32, 1000, 1e4},
	} {
		for _, dev := range []bool{false, true} {
			t.Run(fmt.Sprintf("h%d-d%d-rot%d-pos%d-dev%v", tc.heads, tc.dh, tc.nRot, tc.pos, dev), func(t *testing.T) {
				r := ktRand(uint64(200 + i))
				n := tc.heads * tc.dh
				x := ktUniform(r, n, -2, 2)
				const guard = 16
				dx := ktUpload(t, v, x, guard*4)
				v.poison(t, dx.Add(uint64(n*4)), guard, ktNaN)
				host, dpos := int32(tc.pos), cuda.DevPtr(0)
				if dev {
					host = int32(tc.pos + 1000) // wrong on purpose: the counter must win
					dpos = ktCounters(t, v, 0, int32(tc.pos), int32(tc.pos+1), 0).Add(kernels.CounterPos)
				}
				ktMust(t, v.k.RoPENeox(dx, int32(tc.heads), int32(tc.dh), int32(tc.nRot), host, dpos, tc.base))
				got := ktGet[float32](t, v, dx, n+guard)
				ktCheckPoison(t, "guard", got[n:], ktNaN)
				want := slices.Clone(x)
				half := tc.nRot / 2
				cos, sin := make([]float32, half), make([]float32, half)
				cpu.RopeCosSin(cos, sin, tc.pos, tc.nRot, tc.base)
				cpu.RoPE(want, tc.heads, tc.dh, cos, sin)
				ktCheckElems(t, "rotated", got[:n], ktF64(want), func(j int) float64 {
					h, d := j/tc.dh, j%tc.dh
					if d >= tc.nRot {
						return 0 // untouched: bit-identical
					}
					d %= half
					return 8 * ktU * (math.Abs(float64(x[h*tc.dh+d])) + math.Abs(float64(x[h*tc.dh+d+half])))
				})
			})
		}
	}
}

// TestGPUKernelKVStore checks kv_store_f16 and kv_store_fp8: the slot of
// position pos of every KV head holds exactly gguf.F32ToF16 of k and v (f16:
// round to nearest even, overflow to inf, subnormals) or exactly the e4m3
// codes and scales of the Go codec (kernels.E4M3FromFloat32, KVScaleFP8; the
// fp8 path is specified as correctly rounded f32 steps), and nothing else in
// the caches changes; a position from the device counter writes there, and
// a position outside [0, capacity) writes nothing.
func TestGPUKernelKVStore(t *testing.T) {
	v := ktGPU(t)
	const nKV, dh, capy = 4, 256, 50
	r := ktRand(300)
	// Random cache contents before the stores: a stray write changes them.
	k16 := make([]uint16, nKV*capy*dh)
	v16 := make([]uint16, nKV*capy*dh)
	k8 := make([]uint8, nKV*capy*dh)
	v8 := make([]uint8, nKV*capy*dh)
	ksc := ktUniform(r, nKV*capy, 0, 1)
	vsc := ktUniform(r, nKV*capy, 0, 1)
	for i := range k16 {
		k16[i], v16[i] = uint16(r.Uint32()), uint16(r.Uint32())
		k8[i], v8[i] = uint8(r.Uint32()), uint8(r.Uint32())
	}
	dk16, dv16 := ktUpload(t, v, k16, 0), ktUpload(t, v, v16, 0)
	dk8, dv8 := ktUpload(t, v, k8, 0), ktUpload(t, v, v8, 0)
	dks, dvs := ktUpload(t, v, ksc, 0), ktUpload(t, v, vsc, 0)
	ctr := ktCounters(t, v, 0, 0, 0, 0)

	for step, c := range []struct {
		pos, host int
		dev       bool
	}{
		{37, 37, false}, {0, 0, false}, {capy - 1, capy - 1, false},
		{11, 0, true},                                         // host value wrong on purpose: the counter wins
		{capy, capy, false}, {-1, -1, false}, {capy, 3, true}, // out of range: no write
	} {
		k := ktUniform(r, nKV*dh, -3, 3)
		vv := ktUniform(r, nKV*dh, -3, 3)
		// Specials for f16: overflow to inf, f16 subnormals, -0, exact ties.
		k[0], k[1], k[2], k[3], k[4] = 70000, -1e-6, float32(math.Copysign(0, -1)), 3e-8, 1+0x1p-11
		// fp8: one all-zero v row (amax 0: scale 0, codes 0).
		for i := range dh {
			vv[2*dh+i] = 0
		}
		dk, dv := ktUpload(t, v, k, 0), ktUpload(t, v, vv, 0)
		dpos := cuda.DevPtr(0)
		if c.dev {
			ktSetCounters(t, v, ctr, 0, int32(c.pos), int32(c.pos+1), 0)
			dpos = ctr.Add(kernels.CounterPos)
		}
		what := fmt.Sprintf("store %d (pos %d, device %v)", step, c.pos, c.dev)
		ktMust(t, v.k.KVStoreF16(dk16, dv16, dk, dv, nKV, dh, capy, int32(c.host), dpos))
		ktMust(t, v.k.KVStoreFP8(dk8, dv8, dks, dvs, dk, dv, nKV, dh, capy, int32(c.host), dpos))
		if c.pos >= 0 && c.pos < capy {
			for g := range nKV {
				o := (g*capy + c.pos) * dh
				for i := range dh {
					k16[o+i] = gguf.F32ToF16(k[g*dh+i])
					v16[o+i] = gguf.F32ToF16(vv[g*dh+i])
				}
				deq := make([]float32, dh)
				ksc[g*capy+c.pos] = ktFP8Row(k[g*dh:(g+1)*dh], k8[o:o+dh], deq)
				vsc[g*capy+c.pos] = ktFP8Row(vv[g*dh:(g+1)*dh], v8[o:o+dh], deq)
			}
		}
		for _, b := range []struct {
			name string
			got  []uint16
			want []uint16
		}{{"k f16", ktGet[uint16](t, v, dk16, len(k16)), k16}, {"v f16", ktGet[uint16](t, v, dv16, len(v16)), v16}} {
			if i := ktFirstDiff(b.got, b.want); i >= 0 {
				t.Fatalf("%s: %s cache element %d (head %d, slot %d, dim %d) = %#04x, want %#04x",
					what, b.name, i, i/(capy*dh), i/dh%capy, i%dh, b.got[i], b.want[i])
			}
		}
		for _, b := range []struct {
			name string
			got  []uint8
			want []uint8
		}{{"k fp8", ktGet[uint8](t, v, dk8, len(k8)), k8}, {"v fp8", ktGet[uint8](t, v, dv8, len(v8)), v8}} {
			if i := ktFirstDiff(b.got, b.want); i >= 0 {
				t.Fatalf("%s: %s cache element %d (head %d, slot %d, dim %d) = %#02x, want %#02x",
					what, b.name, i, i/(capy*dh), i/dh%capy, i%dh, b.got[i], b.want[i])
			}
		}
		ktCheckBits(t, what+": k scales", ktGet[float32](t, v, dks, len(ksc)), ksc)
		ktCheckBits(t, what+": v scales", ktGet[float32](t, v, dvs, len(vsc)), vsc)
	}
}

// ktFirstDiff returns the first index where a and b differ, or -1.
func ktFirstDiff[T comparable](a, b []T) int {
	for i := range b {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// ktSplitFn launches one attn_split variant (ks and vs are ignored for f16).
type ktSplitFn func(ms, acc, q, kc, vc, ks, vs cuda.DevPtr, nHead, nKV, capy, ns, hpb, tkv int32, dtkv cuda.DevPtr, scale float32) error

// ktAttnSplit returns the split kernel of a variant through the generated
// family table, as the engine launches it (step.go attnSplit); the variant
// must be one the spec builds (kernels.AttnSplitName).
func ktAttnSplit(k *Kernels, dh int, fp8, vec, mma bool) (ktSplitFn, error) {
	if _, err := kernels.AttnSplitName(dh, fp8, vec, mma); err != nil {
		return nil, err
	}
	v := AttnSplitVariant{HeadDim: dh, FP8: b2i(fp8), Vec: b2i(vec), MMA: b2i(mma)}
	return func(ms, acc, q, kc, vc, ks, vs cuda.DevPtr, nHead, nKV, capy, ns, hpb, tkv int32, dtkv cuda.DevPtr, scale float32) error {
		return k.AttnSplit(v, ms, acc, q, kc, vc, ks, vs, nHead, nKV, capy, ns, hpb, tkv, dtkv, scale)
	}, nil
}

// TestGPUKernelAttention runs attn_split_* + attn_combine, every head dim
// (64, 128, 256), KV type (f16, fp8) and variant (scalar, vec, and at head
// dim 256 the tensor-core split of attention_mma.cu), GQA 8/2,
// 16/4 and 24/2 (with G q heads per block, 24/2 tiles the 12 q heads of a
// KV head over 3 blocks), t_kv from 1 to 32768, n_splits = min(ceil(t_kv/64), cap) for
// the production cap (maxSplits: AttnSplitBlocksPerSM·SMs/n_kv, bucket.go) and for cap 4 (chunks of up to
// 8192 keys), plus more splits than keys for t_kv < 64 (empty splits), gate
// off and on; the reference is float64 attention over the SAME dequantised
// cache (f16 decoded, or e4m3 decoded times its f32 scale, both exact), so
// only f32 arithmetic separates them.
//
// Cache slots from t_kv to capacity hold NaN (f16 0x7e00, e4m3 0x7f, NaN
// scales), so a key read past t_kv turns the output into NaN; t_kv runs
// from large to small and the poison grows with it.
//
// Checks, per run: the partials (empty splits exactly {−inf, 0, 0...};
// per-split max and sum within their f32 bounds, ktAttnRef.checkSplits),
// the output within an absolute tolerance, the device-counter t_kv path
// (with a wrong host value) bit-identical to the host path, and the
// partials with 1 and 3 q heads per block (hpb) bit-identical to those with
// the kernel's G.
//
// Output tolerance: |gpu − ref| ≤ max|v|·(4e-5 + 2e-6·sqrt(t_kv)). The
// constant covers score errors (an f32 dot of dh products, typically ≲1e-6
// absolute, moving softmax weights by that relative amount; the tensor-core
// split's q and weights carry 22 bits, 2^-22 relative, into f32 sums), the
// splits' base-2 softmax (ex2.approx: 2 ulp a weight; the score times log2 e
// rounded, ≲1e-6 relative at |score| ≤ 30) and the combine;
// the sqrt term the online-softmax accumulation, ≤ 3u per key of a
// sub-group's sequence (worst case at t_kv 32768 with 4 splits: 8192 keys
// over the scalar kernels' 8 sub-groups (a warp each), 1024 keys each,
// 1.8e-4·max|v|, under the 3.6e-4 + 4e-5 allowed). The error is absolute
// (relative to max|v|, not max|out|) because out is an average of random v
// and shrinks like 1/sqrt(t_kv) while the f32 errors do not.
//
// FP8: the output is also compared with attention over the original f32
// K/V and logged as "FP8 KV attention error"; e4m3 keeps 3 mantissa bits
// (each value within 2^-4 relative), so a weighted average of v moves by at
// most max|v|/16 (t_kv 1: out is the decoded v itself; in fact ≤ 16/448 of
// the row's amax, half an e4m3 step in the top binade), and the K error moves
// the softmax weights by ~|Δscore| ≈ 0.05 here, which averages out over many
// keys but not over 2 or 5. The test bounds the error by max|v|/16 at every
// t_kv; a float64 simulation of these seeded caches gives at most 3.8% (t_kv
// 2) and at most 2% for t_kv ≥ 63.
func TestGPUKernelAttention(t *testing.T) {
	v := ktGPU(t)
	sms := v.e.Info().SMs
	seed := uint64(400)
	fp8Worst := 0.0
	for _, dh := range []int{64, 128, 256} {
		for _, fp8 := range []bool{false, true} {
			for _, gq := range []struct{ nHead, nKV int }{{8, 2}, {16, 4}, {24, 2}} {
				seed++
				kv := "f16"
				if fp8 {
					kv = "fp8"
				}
				t.Run(fmt.Sprintf("d%d-%s-%dq-%dkv", dh, kv, gq.nHead, gq.nKV), func(t *testing.T) {
					fp8Worst = max(fp8Worst, ktAttentionCase(t, v, seed, dh, fp8, gq.nHead, gq.nKV, sms))
				})
			}
		}
	}
	t.Logf("FP8 KV attention error, worst of all cases: max|out(fp8 cache) − out(f32 K/V)| = %.3g·max|v|", fp8Worst)
}

// ktAttentionCase runs one (head dim, KV type, GQA) configuration over every
// t_kv and returns the worst fp8-vs-f32 output error (0 for f16).
func ktAttentionCase(t *testing.T, v *ktEnv, seed uint64, dh int, fp8 bool, nHead, nKV, sms int) float64 {
	ts := []int{4097, 1000, 65, 64, 63, 5, 2, 1} // descending: the poisoned tail grows
	if nHead == 8 && nKV == 2 {
		ts = append([]int{32768}, ts...)
	}
	tmax := ts[0]
	capy := tmax + 5
	capSM := maxSplits(splitWave(sms), nKV)
	splits := func(tkv int) []int {
		base := (tkv + 63) / 64
		ns := []int{min(base, capSM), min(base, 4)}
		if tkv < 64 {
			ns = append(ns, tkv+2) // more splits than keys: the last ones are empty
		}
		slices.Sort(ns)
		return slices.Compact(ns)
	}
	maxNS := 0
	for _, tkv := range ts {
		maxNS = max(maxNS, slices.Max(splits(tkv)))
	}

	// K and V rows U(-1,1) times a per-row factor e^U(-1,1): scores spread
	// over a few units (the online max moves) and fp8 row scales differ.
	r := ktRand(seed)
	n := nKV * capy * dh
	kf, vf := make([]float32, n), make([]float32, n)
	for g := range nKV {
		for j := range tmax {
			fk := float32(math.Exp(float64(2*r.Float32() - 1)))
			fv := float32(math.Exp(float64(2*r.Float32() - 1)))
			row := (g*capy + j) * dh
			for i := range dh {
				kf[row+i] = (2*r.Float32() - 1) * fk
				vf[row+i] = (2*r.Float32() - 1) * fv
			}
		}
	}
	kd, vd := make([]float32, n), make([]float32, n) // what the kernel reads
	var dk, dv, dks, dvs cuda.DevPtr
	if fp8 {
		kc, vc := make([]uint8, n), make([]uint8, n)
		ks, vs := make([]float32, nKV*capy), make([]float32, nKV*capy)
		for g := range nKV {
			for j := range tmax {
				o := (g*capy + j) * dh
				ks[g*capy+j] = ktFP8Row(kf[o:o+dh], kc[o:o+dh], kd[o:o+dh])
				vs[g*capy+j] = ktFP8Row(vf[o:o+dh], vc[o:o+dh], vd[o:o+dh])
			}
		}
		dk, dv, dks, dvs = ktUpload(t, v, kc, 0), ktUpload(t, v, vc, 0), ktUpload(t, v, ks, 0), ktUpload(t, v, vs, 0)
	} else {
		kc, vc := make([]uint16, n), make([]uint16, n)
		for i := range n {
			kc[i], vc[i] = gguf.F32ToF16(kf[i]), gguf.F32ToF16(vf[i])
			kd[i], vd[i] = gguf.F16ToF32(kc[i]), gguf.F16ToF32(vc[i])
		}
		dk, dv = ktUpload(t, v, kc, 0), ktUpload(t, v, vc, 0)
	}
	var maxV, maxV32 float64
	for i := range n {
		maxV = math.Max(maxV, math.Abs(float64(vd[i])))
		maxV32 = math.Max(maxV32, math.Abs(float64(vf[i])))
	}

	q := ktUniform(r, nHead*dh, -2, 2)
	gate := ktUniform(r, nHead*2*dh, -3, 3) // the q|gate rows: gate of head h at h·2dh + dh
	dq, dgate := ktUpload(t, v, q, 0), ktUpload(t, v, gate, 0)
	gatePtr := dgate.Add(uint64(dh * 4))
	ctr := ktCounters(t, v, 0, 0, 0, 0)
	dms := v.alloc(t, nHead*maxNS*2*4)
	dacc := v.alloc(t, nHead*maxNS*dh*4)
	const guard = 16
	nOut := nHead * dh
	dout := v.alloc(t, (nOut+guard)*4)
	scale := float32(1 / math.Sqrt(float64(dh)))

	worst, worstMMA, fp8Worst := 0.0, 0.0, 0.0
	var fp8Log []string
	for _, tkv := range ts {
		for g := range nKV {
			o := g*capy + tkv
			if fp8 {
				ktMust(t, v.e.MemsetD8Async(dk.Add(uint64(o*dh)), 0x7f, uint64((capy-tkv)*dh))) // e4m3 NaN
				ktMust(t, v.e.MemsetD8Async(dv.Add(uint64(o*dh)), 0x7f, uint64((capy-tkv)*dh)))
				v.poison(t, dks.Add(uint64(o*4)), capy-tkv, ktNaN)
				v.poison(t, dvs.Add(uint64(o*4)), capy-tkv, ktNaN)
			} else {
				v.poison(t, dk.Add(uint64(o*dh*2)), (capy-tkv)*dh/2, 0x7e007e00) // two f16 NaNs
				v.poison(t, dv.Add(uint64(o*dh*2)), (capy-tkv)*dh/2, 0x7e007e00)
			}
		}
		ref := ktAttention(q, kd, vd, nHead, nKV, capy, dh, tkv, scale)
		wantGated := make([]float64, nOut)
		for i := range wantGated {
			h, d := i/dh, i%dh
			wantGated[i] = ref.out[i] / (1 + math.Exp(-float64(gate[h*2*dh+dh+d])))
		}
		var ref32 *ktAttnRef
		if fp8 && tkv <= 4097 {
			ref32 = ktAttention(q, kf, vf, nHead, nKV, capy, dh, tkv, scale)
		}
		tol := maxV * (4e-5 + 2e-6*math.Sqrt(float64(tkv)))
		fp8AtT := 0.0
		for _, ns := range splits(tkv) {
			chunk := (tkv + ns - 1) / ns
			empty := (ns-1)*chunk >= tkv
			forms := []struct{ vec, mma bool }{{false, false}, {true, false}}
			if dh == 256 {
				forms = append(forms, struct{ vec, mma bool }{true, true})
			}
			for _, form := range forms {
				vec := form.vec
				split, err := ktAttnSplit(v.k, dh, fp8, vec, form.mma)
				ktMust(t, err)
				what := fmt.Sprintf("t_kv %d, %d splits (chunk %d), vec %v, mma %v", tkv, ns, chunk, vec, form.mma)
				var hostOut [2][]float32 // gate off, on
				g := kernels.AttnHeadsPerBlock(dh, vec)
				var partMS, partAcc []float32 // the host path's partials with g q heads per block
				for _, dev := range []bool{false, true} {
					v.poison(t, dms, nHead*maxNS*2, ktNaN)
					v.poison(t, dacc, nHead*maxNS*dh, ktNaN)
					host, dtkv := int32(tkv), cuda.DevPtr(0)
					if dev {
						ktSetCounters(t, v, ctr, 0, int32(tkv-1), int32(tkv), 0)
						host = int32(tkv + 1) // wrong on purpose: slot t_kv is NaN
						dtkv = ctr.Add(kernels.CounterTKV)
					}
					ktMust(t, split(dms, dacc, dq, dk, dv, dks, dvs, int32(nHead), int32(nKV), int32(capy), int32(ns), int32(g), host, dtkv, scale))
					if !dev {
						ms := ktGet[float32](t, v, dms, nHead*ns*2)
						partMS, partAcc = ms, ktGet[float32](t, v, dacc, nHead*ns*dh)
						var acc []float32
						if empty {
							acc = ktGet[float32](t, v, dacc, nHead*ns*dh)
						}
						if err := ref.checkSplits(ms, acc, ns); err != nil {
							t.Fatalf("%s: partials: %v", what, err)
						}
					}
					for gi, gated := range []bool{false, true} {
						gp, want := cuda.DevPtr(0), ref.out
						if gated {
							gp, want = gatePtr, wantGated
						}
						w := fmt.Sprintf("%s, gate %v", what, gated)
						v.poison(t, dout, nOut+guard, ktNaN)
						ktMust(t, v.k.AttnCombine(dout, dms, dacc, gp, int32(nHead), int32(dh), int32(ns), int32(2*dh)))
						got := ktGet[float32](t, v, dout, nOut+guard)
						ktCheckPoison(t, w+": out guard", got[nOut:], ktNaN)
						got = got[:nOut]
						if dev {
							ktCheckBits(t, w+": device t_kv vs host t_kv", got, hostOut[gi])
							continue
						}
						hostOut[gi] = got
						ktCheckElems(t, w, got, want, func(int) float64 { return tol })
						d, _ := ktDiff(got, want)
						worst = max(worst, d/maxV)
						if form.mma {
							worstMMA = max(worstMMA, d/maxV)
						}
						if ref32 != nil && !gated {
							d32, _ := ktDiff(got, ref32.out)
							fp8AtT = max(fp8AtT, d32/maxV32)
							if !(d32 <= maxV32/16) {
								t.Errorf("%s: FP8 KV attention error %.3g·max|v| > 1/16", w, d32/maxV32)
							}
						}
					}
				}
				// Fewer q heads per block (1, 2 and 3: the kernel tiles a group of
				// 4 as 4 × 1, 2 × 2, 2 × 2, of 12 as 12 × 1, 6 × 2, 4 × 3): every
				// head's partials bit for bit as with g, nothing written past them.
				for _, hpb := range []int{1, 2, 3} {
					if hpb >= min(g, nHead/nKV) {
						continue
					}
					v.poison(t, dms, nHead*maxNS*2, ktNaN)
					v.poison(t, dacc, nHead*maxNS*dh, ktNaN)
					ktMust(t, split(dms, dacc, dq, dk, dv, dks, dvs, int32(nHead), int32(nKV), int32(capy), int32(ns), int32(hpb), int32(tkv), 0, scale))
					w := fmt.Sprintf("%s, %d q heads per block", what, hpb)
					ms := ktGet[float32](t, v, dms, nHead*maxNS*2)
					acc := ktGet[float32](t, v, dacc, nHead*maxNS*dh)
					ktCheckBits(t, w+": max, sum", ms[:nHead*ns*2], partMS)
					ktCheckBits(t, w+": acc", acc[:nHead*ns*dh], partAcc)
					ktCheckPoison(t, w+": past the max, sum partials", ms[nHead*ns*2:], ktNaN)
					ktCheckPoison(t, w+": past the acc partials", acc[nHead*ns*dh:], ktNaN)
				}
			}
		}
		if ref32 != nil {
			fp8Worst = max(fp8Worst, fp8AtT)
			fp8Log = append(fp8Log, fmt.Sprintf("t_kv %d: %.3g", tkv, fp8AtT))
		}
	}
	t.Logf("worst |gpu − ref|/max|v| = %.3g over %v (max|v| %.3g)", worst, ts, maxV)
	if dh == 256 {
		// The tensor-core split's q and weights carry 22 bits (2^-22 ≈ 2.4e-7
		// relative) into f32 sums, as precise as the vector kernels (their
		// worst here ~1e-7 to 5e-7 of max|v|): 2e-6 leaves 8× room above
		// 2^-22 and fails a lost lo half (a weight's in f16's subnormals gave
		// 9.2e-6 in run144, perf.md step 68), which the shared tolerance
		// above (4e-5 + ...) would let pass.
		t.Logf("worst of the tensor-core split (attention_mma.cu): %.3g", worstMMA)
		if worstMMA > 2e-6 {
			t.Errorf("tensor-core split: worst |gpu − ref| = %.3g·max|v| > 2e-6", worstMMA)
		}
	}
	if fp8 {
		t.Logf("FP8 KV attention error (max|out_fp8 − out_f32|/max|v|): %v", fp8Log)
	}
	return fp8Worst
}

// TestGPUKernelAttnCombine checks attn_combine on its own with synthetic
// partials: random (max, sum, acc) per split, about a quarter of the splits
// empty ({−inf, 0, 0}), one head with every split empty (t_kv = 0: output
// 0), n_splits 1, 7 and 300 (more splits than the block's 128 threads),
// gate off and on. Reference ktCombine (float64). Tolerance per element:
// the kernel adds n_splits terms in f32 for the sum and for each output dim
// and takes expf (≤ 2 ulp) of f32 differences: (2·n_splits+32)·u·Σ_s f_s·|acc_s|/L.
func TestGPUKernelAttnCombine(t *testing.T) {
	v := ktGPU(t)
	for i, tc := range []struct{ nHead, dh, ns int }{{6, 64, 1}, {6, 256, 7}, {4, 128, 300}} {
		t.Run(fmt.Sprintf("h%d-d%d-splits%d", tc.nHead, tc.dh, tc.ns), func(t *testing.T) {
			r := ktRand(uint64(500 + i))
			ms := make([]float32, tc.nHead*tc.ns*2)
			acc := make([]float32, tc.nHead*tc.ns*tc.dh)
			for h := range tc.nHead {
				for s := range tc.ns {
					p := h*tc.ns + s
					if h == 0 || r.Float32() < 0.25 {
						ms[2*p], ms[2*p+1] = float32(math.Inf(-1)), 0
						continue
					}
					l := 1 + 63*r.Float32()
					ms[2*p], ms[2*p+1] = 10*r.Float32()-5, l
					for d := range tc.dh {
						acc[p*tc.dh+d] = l * (2*r.Float32() - 1)
					}
				}
			}
			gate := ktUniform(r, tc.nHead*2*tc.dh, -3, 3)
			dms, dacc, dgate := ktUpload(t, v, ms, 0), ktUpload(t, v, acc, 0), ktUpload(t, v, gate, 0)
			const guard = 16
			n := tc.nHead * tc.dh
			dout := v.alloc(t, (n+guard)*4)
			for _, gated := range []bool{false, true} {
				gp, gs := cuda.DevPtr(0), []float32(nil)
				if gated {
					gp, gs = dgate.Add(uint64(tc.dh*4)), gate[tc.dh:]
				}
				v.poison(t, dout, n+guard, ktNaN)
				ktMust(t, v.k.AttnCombine(dout, dms, dacc, gp, int32(tc.nHead), int32(tc.dh), int32(tc.ns), int32(2*tc.dh)))
				got := ktGet[float32](t, v, dout, n+guard)
				ktCheckPoison(t, "guard", got[n:], ktNaN)
				want, bound := ktCombine(ms, acc, gs, tc.nHead, tc.dh, tc.ns, 2*tc.dh)
				tol := float64(2*tc.ns+32) * ktU
				ktCheckElems(t, fmt.Sprintf("gate %v", gated), got[:n], want, func(i int) float64 { return tol * bound[i] })
			}
		})
	}
}

// TestGPUKernelGDNConv runs gdn_conv for several steps in sequence, the
// state carried on the device and in cpu.ConvStep, for qwen35's kernel 4
// (channels 2K+V at H_k 2, H_v 4, and a count that is not a multiple of the
// 256-thread block) and kernel 2. The state update is a shift plus a copy:
// bit-identical. Output tolerance per channel: a sum of kern products in a
// different order on each side (the GPU may use FMA) is within
// (kern+4)·u·Σ|terms| per side, silu's slope is at most 1.1, and silu itself
// differs by a few ulp (expf ≤ 2 ulp against a rounded float64 exp):
// 2.2·(kern+4)·u·Σ|terms| + 8u·|y|.
func TestGPUKernelGDNConv(t *testing.T) {
	v := ktGPU(t)
	for i, tc := range []struct{ channels, kern, steps int }{{1024, 4, 5}, {1000, 4, 5}, {300, 2, 3}} {
		t.Run(fmt.Sprintf("c%d-k%d", tc.channels, tc.kern), func(t *testing.T) {
			r := ktRand(uint64(600 + i))
			c, ks := tc.channels, tc.kern-1
			state := ktUniform(r, c*ks, -1, 1)
			w := ktUniform(r, c*tc.kern, -1, 1)
			const guard = 16
			dstate := ktUpload(t, v, state, guard*4)
			v.poison(t, dstate.Add(uint64(len(state)*4)), guard, ktNaN)
			dw := ktUpload(t, v, w, 0)
			dy := v.alloc(t, (c+guard)*4)
			for step := range tc.steps {
				x := ktUniform(r, c, -2, 2)
				dx := ktUpload(t, v, x, 0)
				abs := make([]float64, c)
				for ch := range c {
					abs[ch] = math.Abs(float64(x[ch]) * float64(w[ch*tc.kern+ks]))
					for j := range ks {
						abs[ch] += math.Abs(float64(state[ch*ks+j]) * float64(w[ch*tc.kern+j]))
					}
				}
				want := make([]float32, c)
				cpu.ConvStep(want, state, x, w, c, tc.kern)
				v.poison(t, dy, c+guard, ktNaN)
				ktMust(t, v.k.GDNConv(dy, dstate, dx, dw, int32(c), int32(tc.kern)))
				got := ktGet[float32](t, v, dy, c+guard)
				ktCheckPoison(t, "y guard", got[c:], ktNaN)
				ktCheckElems(t, fmt.Sprintf("step %d y", step), got[:c], ktF64(want), func(i int) float64 {
					return 2.2*float64(tc.kern+4)*ktU*abs[i] + 8*ktU*math.Abs(float64(want[i]))
				})
				st := ktGet[float32](t, v, dstate, len(state)+guard)
				ktCheckPoison(t, "state guard", st[len(state):], ktNaN)
				ktCheckBits(t, fmt.Sprintf("step %d state", step), st[:len(state)], state)
			}
		})
	}
}

// TestGPUKernelGDNDelta runs gdn_delta for 4 steps with the state carried
// (on the device, and through cpu.DeltaRuleStep on the host; both store
// M[j][i] at state[(h·128+j)·128+i], j = v index, i = k index), for H_k 2 /
// H_v 4 and H_k 16 / H_v 32, with both head maps (0: h % H_k, qwen35's tiled
// order; 1: h / (H_v/H_k), grouped). The reference normalises q and k with
// cpu.L2Norm (1/sqrt(Σx²+eps), eps model.L2NormEps), scales q by
// 1/sqrtf(128), beta = sigmoid(b), g = ssm_a·softplus(a + dt_bias), as
// gdn.cu documents. The initial state is random (not zero) so the decay and
// the k·M products are exercised from step 0.
//
// Tolerance 2e-5 relative to max|ref| for o and for the state after each
// step: the kernel's 128-term dot products are f32 (4 per lane + a 5-level
// butterfly), the reference's float64; about 1e-6·sqrt(128) ≈ 1.1e-5 per
// step for o, twice that allows for 4 steps of carried state (the state's
// own per-step error is a few ulp of |M|).
func TestGPUKernelGDNDelta(t *testing.T) {
	v := ktGPU(t)
	const S, steps, tol = 128, 4, 2e-5
	for i, tc := range []struct{ hk, hv, headMap int }{{2, 4, 0}, {2, 4, 1}, {16, 32, 0}, {16, 32, 1}} {
		t.Run(fmt.Sprintf("hk%d-hv%d-map%d", tc.hk, tc.hv, tc.headMap), func(t *testing.T) {
			r := ktRand(uint64(700 + i))
			state := ktUniform(r, tc.hv*S*S, -0.3, 0.3)
			ssmA := ktUniform(r, tc.hv, -2, -0.1) // A = −exp(A_log) < 0
			dtBias := ktUniform(r, tc.hv, -1, 1)
			const guard = 16
			dstate := ktUpload(t, v, state, guard*4)
			v.poison(t, dstate.Add(uint64(len(state)*4)), guard, ktNaN)
			dA, dDt := ktUpload(t, v, ssmA, 0), ktUpload(t, v, dtBias, 0)
			do := v.alloc(t, (tc.hv*S+guard)*4)
			qScale := 1 / float32(math.Sqrt(S)) // 1.0f/sqrtf(128): sqrtf is correctly rounded
			for step := range steps {
				q := ktUniform(r, tc.hk*S, -1, 1)
				k := ktUniform(r, tc.hk*S, -1, 1)
				vv := ktUniform(r, tc.hv*S, -1, 1)
				b := ktUniform(r, tc.hv, -3, 3)
				a := ktUniform(r, tc.hv, -2, 2)
				dq, dk, dv := ktUpload(t, v, q, 0), ktUpload(t, v, k, 0), ktUpload(t, v, vv, 0)
				db, da := ktUpload(t, v, b, 0), ktUpload(t, v, a, 0)
				v.poison(t, do, tc.hv*S+guard, ktNaN)
				ktMust(t, v.k.GDNDelta(dstate, do, dq, dk, dv, db, da, dA, dDt, int32(tc.hk), int32(tc.hv), int32(tc.headMap), model.L2NormEps))

				want := make([]float32, tc.hv*S)
				for h := range tc.hv {
					hk := h % tc.hk
					if tc.headMap == 1 {
						hk = h / (tc.hv / tc.hk)
					}
					qh := slices.Clone(q[hk*S : (hk+1)*S])
					kh := slices.Clone(k[hk*S : (hk+1)*S])
					cpu.L2Norm(qh, model.L2NormEps)
					cpu.L2Norm(kh, model.L2NormEps)
					for j := range qh {
						qh[j] *= qScale
					}
					beta := cpu.Sigmoid(b[h])
					g := ssmA[h] * cpu.Softplus(a[h]+dtBias[h])
					cpu.DeltaRuleStep(state[h*S*S:(h+1)*S*S], qh, kh, vv[h*S:(h+1)*S], want[h*S:(h+1)*S], g, beta)
				}
				got := ktGet[float32](t, v, do, tc.hv*S+guard)
				ktCheckPoison(t, "o guard", got[tc.hv*S:], ktNaN)
				eo := ktCheckRel(t, fmt.Sprintf("step %d o", step), got[:tc.hv*S], ktF64(want), tol)
				st := ktGet[float32](t, v, dstate, len(state)+guard)
				ktCheckPoison(t, "state guard", st[len(state):], ktNaN)
				es := ktCheckRel(t, fmt.Sprintf("step %d state", step), st[:len(state)], ktF64(state), tol)
				t.Logf("step %d: o rel err %.3g, state rel err %.3g", step, eo, es)
			}
		})
	}
}

// TestGPUKernelGDNDeltaNormed checks gdn_delta_normed (sm_90 only) against
// the two kernels it fuses, gdn_delta then rmsnorm_gated, on the same random
// inputs over 4 steps of carried state: the normed output and the state must
// be their bits exactly (the kernel takes their arithmetic in their order;
// TestGPUKernelGDNDelta and TestGPUKernelRMSNormGated hold those to the CPU
// reference), and the guards past both stay untouched. Before sm_90 the
// kernel traps and the engine never launches it, so the test skips there.
func TestGPUKernelGDNDeltaNormed(t *testing.T) {
	v := ktGPU(t)
	if v.e.Info().Major < 9 {
		t.Skipf("gdn_delta_normed needs sm_90 (clusters); this GPU is sm_%d%d", v.e.Info().Major, v.e.Info().Minor)
	}
	const S, steps, eps, guard = 128, 4, 1e-6, 16
	for i, tc := range []struct{ hk, hv, headMap int }{{2, 4, 0}, {2, 4, 1}, {16, 16, 0}, {16, 32, 0}, {16, 32, 1}} {
		t.Run(fmt.Sprintf("hk%d-hv%d-map%d", tc.hk, tc.hv, tc.headMap), func(t *testing.T) {
			r := ktRand(uint64(740 + i))
			state := ktUniform(r, tc.hv*S*S, -0.3, 0.3)
			ssmA := ktUniform(r, tc.hv, -2, -0.1)
			dtBias := ktUniform(r, tc.hv, -1, 1)
			w := ktUniform(r, S, 0.5, 1.5)
			two, one := ktUpload(t, v, state, guard*4), ktUpload(t, v, state, guard*4)
			v.poison(t, two.Add(uint64(len(state)*4)), guard, ktNaN)
			v.poison(t, one.Add(uint64(len(state)*4)), guard, ktNaN)
			dA, dDt, dw := ktUpload(t, v, ssmA, 0), ktUpload(t, v, dtBias, 0), ktUpload(t, v, w, 0)
			n := tc.hv * S
			do, want, got := v.alloc(t, n*4), v.alloc(t, (n+guard)*4), v.alloc(t, (n+guard)*4)
			for step := range steps {
				q := ktUniform(r, tc.hk*S, -1, 1)
				k := ktUniform(r, tc.hk*S, -1, 1)
				vv := ktUniform(r, n, -1, 1)
				z := ktUniform(r, n, -4, 4)
				b := ktUniform(r, tc.hv, -3, 3)
				a := ktUniform(r, tc.hv, -2, 2)
				dq, dk, dv, dz := ktUpload(t, v, q, 0), ktUpload(t, v, k, 0), ktUpload(t, v, vv, 0), ktUpload(t, v, z, 0)
				db, da := ktUpload(t, v, b, 0), ktUpload(t, v, a, 0)
				v.poison(t, want, n+guard, ktNaN)
				v.poison(t, got, n+guard, ktNaN)
				ktMust(t, v.k.GDNDelta(two, do, dq, dk, dv, db, da, dA, dDt, int32(tc.hk), int32(tc.hv), int32(tc.headMap), model.L2NormEps))
				ktMust(t, v.k.RMSNormGated(want, do, dw, dz, int32(tc.hv), S, eps))
				ktMust(t, v.k.GDNDeltaNormed(one, got, dq, dk, dv, db, da, dA, dDt, dw, dz, int32(tc.hk), int32(tc.hv), int32(tc.headMap),
					model.L2NormEps, eps))
				wantOn, gotOn := ktGet[float32](t, v, want, n+guard), ktGet[float32](t, v, got, n+guard)
				ktCheckPoison(t, "on guard", gotOn[n:], ktNaN)
				ktCheckBits(t, fmt.Sprintf("step %d on", step), gotOn[:n], wantOn[:n])
				wantSt, gotSt := ktGet[float32](t, v, two, len(state)+guard), ktGet[float32](t, v, one, len(state)+guard)
				ktCheckPoison(t, "state guard", gotSt[len(state):], ktNaN)
				ktCheckBits(t, fmt.Sprintf("step %d state", step), gotSt[:len(state)], wantSt[:len(state)])
			}
		})
	}
}

// TestGPUKernelElementwise checks swiglu (also in place, out = gate), add and
// sigmoid_mul (with the gate rows strided, as for the q|gate projection).
// add is one IEEE add: bit-exact. swiglu and sigmoid_mul differ from
// cpu.SwiGLU / cpu.Sigmoid only in exp (expf ≤ 2 ulp, CUDA programming guide,
// no fast math, i.e. ≤ 4u relative; the CPU's float64 exp rounded once, u),
// then an IEEE add, divide and one or two multiplies on each side: ≤ 13u by
// that count; 24u relative per element allowed.
func TestGPUKernelElementwise(t *testing.T) {
	v := ktGPU(t)
	const n, guard = 10007, 16
	r := ktRand(800)
	gate := ktUniform(r, n, -8, 8)
	up := ktUniform(r, n, -2, 2)
	relTol := func(want []float32) func(int) float64 {
		return func(i int) float64 { return 24 * ktU * math.Abs(float64(want[i])) }
	}
	t.Run("swiglu", func(t *testing.T) {
		dg, du := ktUpload(t, v, gate, 0), ktUpload(t, v, up, 0)
		dout := v.alloc(t, (n+guard)*4)
		v.poison(t, dout, n+guard, ktNaN)
		ktMust(t, v.k.SwiGLU(dout, dg, du, n))
		want := make([]float32, n)
		cpu.SwiGLU(want, gate, up)
		got := ktGet[float32](t, v, dout, n+guard)
		ktCheckPoison(t, "guard", got[n:], ktNaN)
		ktCheckElems(t, "out", got[:n], ktF64(want), relTol(want))
		ktMust(t, v.k.SwiGLU(dg, dg, du, n)) // in place over gate
		ktCheckElems(t, "in place", ktGet[float32](t, v, dg, n), ktF64(want), relTol(want))
	})
	t.Run("add", func(t *testing.T) {
		y := ktUniform(r, n, -4, 4)
		dy := ktUpload(t, v, y, guard*4)
		v.poison(t, dy.Add(n*4), guard, ktNaN)
		ktMust(t, v.k.Add(dy, ktUpload(t, v, up, 0), n))
		cpu.Add(y, up)
		got := ktGet[float32](t, v, dy, n+guard)
		ktCheckPoison(t, "guard", got[n:], ktNaN)
		ktCheckBits(t, "y", got[:n], y)
	})
	for _, tc := range []struct{ rows, n, stride int }{{16, 256, 512}, {3, 100, 100}, {1, 4097, 4097}} {
		t.Run(fmt.Sprintf("sigmoid_mul-%dx%d-stride%d", tc.rows, tc.n, tc.stride), func(t *testing.T) {
			m := tc.rows * tc.n
			x := ktUniform(r, m, -2, 2)
			g := ktUniform(r, tc.rows*tc.stride, -8, 8)
			dx := ktUpload(t, v, x, guard*4)
			v.poison(t, dx.Add(uint64(m*4)), guard, ktNaN)
			ktMust(t, v.k.SigmoidMul(dx, ktUpload(t, v, g, 0), int32(tc.rows), int32(tc.n), int32(tc.stride)))
			want := make([]float32, m)
			for row := range tc.rows {
				for i := range tc.n {
					want[row*tc.n+i] = x[row*tc.n+i] * cpu.Sigmoid(g[row*tc.stride+i])
				}
			}
			got := ktGet[float32](t, v, dx, m+guard)
			ktCheckPoison(t, "guard", got[m:], ktNaN)
			ktCheckElems(t, "x", got[:m], ktF64(want), relTol(want))
		})
	}
}

// TestGPUKernelArgmax checks argmax_partial + argmax_final against
// sample.Argmax (exact: a comparison, no arithmetic) at the vocabulary size of
// qwen35 (248320 = 30 chunks of 8192 and a partial one) and small sizes, with
// ties in different chunks, in one thread's stride and in neighbouring
// threads (the lowest index must win), the maximum in the last partial chunk
// and at 0, NaNs (never chosen), all -inf (index 0) and all NaN
// (kernels.NoToken, and 0 in the counters, which feed the next step). Each
// partial is checked too (largest value, lowest index; (−inf, INT_MAX) for an
// all-NaN chunk). With ctr the token must also land in the device counters
// and pos, t_kv and step advance by one (the end of a device-counter step);
// without, the counters stay as they were.
func TestGPUKernelArgmax(t *testing.T) {
	v := ktGPU(t)
	const chunk = 8192
	for i, tc := range []struct {
		name  string
		n     int
		setup func(x []float32)
	}{
		{"vocab-random", 248320, nil},
		{"vocab-tie-across-chunks", 248320, func(x []float32) { x[200001], x[123457] = 100, 100 }},
		{"vocab-tie-one-thread", 248320, func(x []float32) { x[16384+256*5+7], x[16384+7] = 50, 50 }},
		{"vocab-tie-neighbours", 248320, func(x []float32) { x[70001], x[70000], x[70002] = 60, 60, 60 }},
		{"vocab-max-last", 248320, func(x []float32) { x[248319] = 1e30 }},
		{"vocab-max-first-nans", 248320, func(x []float32) {
			for j := 5; j < len(x); j += 997 {
				x[j] = float32(math.NaN())
			}
			x[0] = 1e20
		}},
		{"n1", 1, nil},
		{"n7", 7, nil},
		{"n8193-second-chunk", 8193, func(x []float32) { x[8192] = 1e9 }},
		{"n1000-all-equal", 1000, func(x []float32) {
			for j := range x {
				x[j] = 0.25
			}
		}},
		{"all-minus-inf", 9000, func(x []float32) {
			for j := range x {
				x[j] = float32(math.Inf(-1))
			}
		}},
		{"all-nan", 20000, func(x []float32) {
			for j := range x {
				x[j] = float32(math.NaN())
			}
		}},
		{"nan-chunk", 3 * chunk, func(x []float32) {
			for j := chunk; j < 2*chunk; j++ {
				x[j] = float32(math.NaN())
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ktRand(uint64(900 + i))
			x := ktUniform(r, tc.n, -10, 10)
			if tc.setup != nil {
				tc.setup(x)
			}
			parts := (tc.n + chunk - 1) / chunk
			dx := ktUpload(t, v, x, 0)
			const guard = 4
			dval, didx := v.alloc(t, (parts+guard)*4), v.alloc(t, (parts+guard)*4)
			dout := v.alloc(t, 4*4)
			ctr := ktCounters(t, v, -5, 10, 11, 3)
			want := int32(sample.Argmax(x))
			wantOut := want // the token read back
			if tc.name == "all-nan" {
				wantOut = kernels.NoToken
			}
			ring := ktRing(t, v)
			for _, useCtr := range []bool{false, true} {
				v.poison(t, dval, parts+guard, ktNaN)
				v.poison(t, didx, parts+guard, ktNaN)
				v.poison(t, dout, 4, ktNaN)
				ktSetCounters(t, v, ctr, -5, 10, 11, 3)
				rs := cuda.HostSlice[int32](ring, 0, 2)
				rs[0], rs[1] = int32(ktNaN), int32(ktNaN)
				ktMust(t, v.k.ArgMaxPartial(dval, didx, dx, int32(tc.n)))
				dctr := cuda.DevPtr(0)
				if useCtr {
					dctr = ctr
				}
				ktMust(t, v.k.ArgMaxFinal(dout, ring.DevPtr(), dctr, dval, didx, int32(tc.n)))
				vals := ktGet[float32](t, v, dval, parts+guard)
				idxs := ktGet[int32](t, v, didx, parts+guard)
				ktCheckPoison(t, "part_val guard", vals[parts:], ktNaN)
				for p := range parts {
					lo, hi := p*chunk, min((p+1)*chunk, tc.n)
					bv, bi := ktArgmaxChunk(x[lo:hi], lo)
					if math.Float32bits(vals[p]) != math.Float32bits(bv) || idxs[p] != bi {
						t.Fatalf("partial %d: (%v, %d), want (%v, %d)", p, vals[p], idxs[p], bv, bi)
					}
				}
				for p := parts; p < parts+guard; p++ {
					if uint32(idxs[p]) != ktNaN {
						t.Fatalf("part_idx guard %d written: %d", p, idxs[p])
					}
				}
				out := ktGet[int32](t, v, dout, 4)
				if out[0] != wantOut {
					t.Fatalf("ctr %v: argmax %d, want %d", useCtr, out[0], wantOut)
				}
				for j := 1; j < 4; j++ {
					if uint32(out[j]) != ktNaN {
						t.Fatalf("out[%d] written: %d", j, out[j])
					}
				}
				c := ktGet[int32](t, v, ctr, kernels.CountersBytes/4)
				wc := [4]int32{-5, 10, 11, 3}
				if useCtr {
					wc = [4]int32{want, 11, 12, 4}
				}
				if c[kernels.CounterToken/4] != wc[0] || c[kernels.CounterPos/4] != wc[1] || c[kernels.CounterTKV/4] != wc[2] || c[kernels.CounterStep/4] != wc[3] {
					t.Fatalf("ctr %v: counters %v, want token %d pos %d t_kv %d step %d", useCtr, c, wc[0], wc[1], wc[2], wc[3])
				}
				ktCheckRing(t, ring, useCtr, 10, wantOut)
			}
		})
	}
}

// ktRing is a mapped pinned ring of two tokens (Cache.tokenHost's kind),
// freed with the test.
func ktRing(t *testing.T, v *ktEnv) *cuda.HostBuf {
	t.Helper()
	ring, err := v.e.HostAllocMapped(8)
	ktMust(t, err)
	t.Cleanup(func() { ring.Free() })
	return ring
}

// ktCheckRing checks a ring poisoned with ktNaN after a step that ended at
// position pos: with the counters, the token at [pos&1] and the other place
// untouched; without, neither place written.
func ktCheckRing(t *testing.T, ring *cuda.HostBuf, useCtr bool, pos int, want int32) {
	t.Helper()
	rs := cuda.HostSlice[int32](ring, 0, 2)
	w := [2]int32{int32(ktNaN), int32(ktNaN)}
	if useCtr {
		w[pos&1] = want
	}
	if rs[0] != w[0] || rs[1] != w[1] {
		t.Fatalf("ctr %v: token ring %v, want %v", useCtr, rs, w)
	}
}

// TestGPUKernelTopK runs the top-k passes (topK: topk_select until one block
// is left) on random logits with ties, NaNs and infinities, from one slice
// to three passes, and compares the answer with ktTopK (the host sampler's
// order) bit for bit; slots past n carry id -1, and the scratch buffers'
// guard stays untouched.
func TestGPUKernelTopK(t *testing.T) {
	v := ktGPU(t)
	const K = kernels.TopKMax
	for i, tc := range []struct {
		name  string
		n     int
		setup func(x []float32)
	}{
		{"n1", 1, nil},
		{"n7", 7, nil},
		{"n64", 64, nil},
		{"n4096-one-slice", 4096, nil},
		{"n4097", 4097, func(x []float32) { x[4096] = 50 }},
		{"vocab-two-passes", 248320, nil},
		{"vocab-ties", 248320, func(x []float32) {
			for j := 0; j < 100; j++ { // 100 equal maxima spread over the slices
				x[j*2477] = 20
			}
		}},
		{"vocab-nans-infs", 248320, func(x []float32) {
			for j := 5; j < len(x); j += 997 {
				x[j] = float32(math.NaN())
			}
			x[17], x[200000] = float32(math.Inf(1)), float32(math.Inf(1))
			x[3] = float32(math.Inf(-1))
		}},
		{"three-passes", 300000, nil},
		{"all-equal", 9000, func(x []float32) {
			for j := range x {
				x[j] = 0.5
			}
		}},
		{"all-nan", 5000, func(x []float32) {
			for j := range x {
				x[j] = float32(math.NaN())
			}
		}},
		{"signed-zeros-on-top", 9000, func(x []float32) {
			for j := range x {
				x[j] = -1 - x[j]*x[j] // below zero: the zeros lead
			}
			for _, j := range []int{8191, 17, 4100, 3} {
				x[j] = float32(math.Copysign(0, -1)) // -0 ranks with +0, by id
			}
			x[5000], x[9] = 0, 0
		}},
		{"few-numbers-among-nans", 5000, func(x []float32) {
			for j := range x {
				if j%1000 != 999 {
					x[j] = float32(math.NaN())
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := ktUniform(ktRand(uint64(950+i)), tc.n, -10, 10)
			if tc.setup != nil {
				tc.setup(x)
			}
			dx := ktUpload(t, v, x, 0)
			const guard = 16 // words past the scratch buffers
			pairs := topKScratchPairs(tc.n)
			scratch := v.alloc(t, (2*2*pairs+guard)*4)
			top := v.alloc(t, 2*K*4)
			v.poison(t, scratch, 2*2*pairs+guard, ktNaN)
			v.poison(t, top, 2*K, ktNaN)
			ktMust(t, topK(v.k, top, scratch, dx, tc.n))
			got := ktGet[float32](t, v, top, K)
			gotIDs := ktGet[int32](t, v, top.Add(4*K), K)
			ktCheckPoison(t, "scratch guard", ktGet[float32](t, v, scratch.Add(uint64(2*2*pairs)*4), guard), ktNaN)
			ids, vals := ktTopK(x, K)
			for j := range K {
				if j >= len(ids) {
					if gotIDs[j] != -1 {
						t.Fatalf("slot %d past n %d: id %d, want -1", j, tc.n, gotIDs[j])
					}
					continue
				}
				if gotIDs[j] != ids[j] || math.Float32bits(got[j]) != math.Float32bits(vals[j]) {
					t.Fatalf("rank %d: (%d, %v), want (%d, %v)", j, gotIDs[j], got[j], ids[j], vals[j])
				}
			}
		})
	}
}

// TestGPUKernelCounters checks counters_set (token, pos, t_kv as given,
// step 0) at the byte offsets kernels.Counter* name (argmax_final's advance
// is in TestGPUKernelArgmax).
func TestGPUKernelCounters(t *testing.T) {
	v := ktGPU(t)
	const guard = 4
	n := kernels.CountersBytes / 4
	ctr := v.alloc(t, (n+guard)*4)
	v.poison(t, ctr, n+guard, ktNaN)
	read := func() []int32 {
		c := ktGet[int32](t, v, ctr, n+guard)
		for _, g := range c[n:] {
			if uint32(g) != ktNaN {
				t.Fatalf("counters guard written: %v", c)
			}
		}
		return c[:n]
	}
	check := func(what string, token, pos, tkv, step int32) {
		t.Helper()
		c := read()
		if c[kernels.CounterToken/4] != token || c[kernels.CounterPos/4] != pos || c[kernels.CounterTKV/4] != tkv || c[kernels.CounterStep/4] != step {
			t.Fatalf("%s: counters %v, want token %d pos %d t_kv %d step %d", what, c, token, pos, tkv, step)
		}
	}
	ktMust(t, v.k.CountersSet(ctr, 1234, 77, 78))
	check("set", 1234, 77, 78, 0)
	ktMust(t, v.k.CountersSet(ctr, -1, 0, 1))
	check("set again", -1, 0, 1, 0)
}

// TestGPUKernelAttnPrep: attn_prep_{f16,fp8} must give the bits of the five
// kernels it replaces, run on the same inputs: rmsnorm of the q heads (read
// at q_stride out of q|gate) and of the k heads, rope_neox of both, then
// kv_store of k and v. Both paths use the same device functions (norm sum,
// rope angle and rotation without FMA contraction, the f16 and e4m3 codecs;
// the e4m3 amax is order-free), so the comparison is bit for bit: q, both
// caches (the slots written and every other slot untouched) and the fp8
// scales, for a host position, a device-counter position and positions
// outside [0, capacity), which must write nothing.
func TestGPUKernelAttnPrep(t *testing.T) {
	v := ktGPU(t)
	for ci, tc := range []struct {
		nh, nkv, dh, nRot, qStride int
	}{
		{8, 2, 256, 64, 512},  // qwen35: partial rotary, q read out of q|gate
		{4, 4, 128, 128, 128}, // qwen3: full rotary, no gate
		{16, 4, 64, 32, 64},
	} {
		t.Run(fmt.Sprintf("h%d-kv%d-d%d-rot%d", tc.nh, tc.nkv, tc.dh, tc.nRot), func(t *testing.T) {
			const capy = 40
			const base, eps = float32(1e7), float32(1e-6)
			r := ktRand(uint64(700 + ci))
			nh, nkv, dh := tc.nh, tc.nkv, tc.dh
			qg := ktUniform(r, nh*tc.qStride, -3, 3)
			kv := ktUniform(r, 2*nkv*dh, -3, 3) // kraw | v, as the fused q|k|v matvec writes them
			qn := ktUniform(r, dh, 0.5, 1.5)
			kn := ktUniform(r, dh, 0.5, 1.5)
			dqg, dkv := ktUpload(t, v, qg, 0), ktUpload(t, v, kv, 0)
			dkraw, dv := dkv, dkv.Add(uint64(nkv*dh)*4)
			dqn, dkn := ktUpload(t, v, qn, 0), ktUpload(t, v, kn, 0)
			ctr := ktCounters(t, v, 0, 0, 0, 0)
			// Two copies of random caches: the reference sequence writes one,
			// the fused kernel the other.
			mk := ktRandKVCaches(t, v, r, nkv, capy, dh)
			ref, got := mk(), mk()
			qRef, kRef := v.alloc(t, nh*dh*4), v.alloc(t, nkv*dh*4)
			qGot := v.alloc(t, nh*dh*4)
			for _, c := range []struct {
				host, dev int32
				useDev    bool
			}{
				{17, 0, false},
				{123456, 0, false},              // a large angle, and a slot past the cache: no write
				{0, 5, true},                    // the device counter wins over the host value
				{capy, 0, false}, {3, -1, true}, // outside [0, capacity): no write
			} {
				p, dpos := c.host, cuda.DevPtr(0)
				if c.useDev {
					ktSetCounters(t, v, ctr, 0, c.dev, c.dev+1, 0)
					dpos = ctr.Add(kernels.CounterPos)
				}
				ktMust(t, v.k.RMSNorm(qRef, dqg, dqn, int32(nh), int32(dh), int32(tc.qStride), int32(dh), eps))
				ktMust(t, v.k.RMSNorm(kRef, dkraw, dkn, int32(nkv), int32(dh), int32(dh), int32(dh), eps))
				ktMust(t, v.k.RoPENeox(qRef, int32(nh), int32(dh), int32(tc.nRot), p, dpos, base))
				ktMust(t, v.k.RoPENeox(kRef, int32(nkv), int32(dh), int32(tc.nRot), p, dpos, base))
				ktMust(t, v.k.KVStoreF16(ref.k16, ref.v16, kRef, dv, int32(nkv), int32(dh), capy, p, dpos))
				ktMust(t, v.k.KVStoreFP8(ref.k8, ref.v8, ref.ks, ref.vs, kRef, dv, int32(nkv), int32(dh), capy, p, dpos))
				v.poison(t, qGot, nh*dh, ktNaN)
				ktMust(t, v.k.AttnPrepF16(qGot, dqg, int32(tc.qStride), dqn, dkraw, dkn, dv, got.k16, got.v16,
					int32(nh), int32(nkv), int32(dh), int32(tc.nRot), capy, p, dpos, base, eps))
				what := fmt.Sprintf("pos host %d device %d (used %v)", c.host, c.dev, c.useDev)
				ktCheckBits(t, what+" q (f16 launch)", ktGet[float32](t, v, qGot, nh*dh), ktGet[float32](t, v, qRef, nh*dh))
				v.poison(t, qGot, nh*dh, ktNaN)
				ktMust(t, v.k.AttnPrepFP8(qGot, dqg, int32(tc.qStride), dqn, dkraw, dkn, dv, got.k8, got.v8, got.ks, got.vs,
					int32(nh), int32(nkv), int32(dh), int32(tc.nRot), capy, p, dpos, base, eps))
				ktCheckBits(t, what+" q (fp8 launch)", ktGet[float32](t, v, qGot, nh*dh), ktGet[float32](t, v, qRef, nh*dh))
				got.check(t, v, what+": ", " against the five-kernel sequence", ref)
			}
		})
	}
}

// TestGPUKernelSampleDraw: sample_draw picks the token the host sampler
// picks (sample.Sampler.SampleTop, same options and seed) from the same top
// k, draw after draw, and its trace shows why bit for bit: the random
// number is sample.Uniform's and the candidates kept and their
// probabilities are sample.Filter's on the whole logits, every float64
// equal. Logits: uniform, with ties, NaNs inside the top k under a finite
// maximum (no candidates, on both sides), a +Inf maximum (drawn every
// time), all −Inf (uniform), mostly −Inf, and all NaN (kernels.NoToken where the host fails with
// model.ErrNaNLogits, neither drawing) at some steps; the options range over
// the filters, and a temperature of 0.001 sends finite differences below
// exp's range. The kernel must also advance its draw index and end the
// device-counter step as argmax_final does.
func TestGPUKernelSampleDraw(t *testing.T) {
	v := ktGPU(t)
	const K, steps = kernels.TopKMax, 120
	r := ktRand(1201)
	for ci, o := range []sample.Options{
		{Temperature: sample.DefaultTemperature, TopK: sample.DefaultTopK, TopP: sample.DefaultTopP, MinP: sample.DefaultMinP, Seed: 1}, // the CLI's defaults
		{Temperature: 1, TopK: 64, Seed: 2},
		{Temperature: 0.3, TopK: 1, Seed: 3},
		{Temperature: 1.7, TopK: 7, TopP: 0.5, Seed: 4},
		{Temperature: 2.5, TopK: 64, TopP: 0.99, MinP: 0.001, Seed: 1<<63 + 5},
		{Temperature: 0.05, TopK: 20, MinP: 0.3, Seed: 6},
		{Temperature: 1, TopK: 2, TopP: 1, MinP: 1, Seed: 7},
		{Temperature: 0.001, TopK: 64, Seed: 8},
	} {
		host, err := sample.NewSampler(o)
		ktMust(t, err)
		sm := Sampling{TopK: o.TopK, Temperature: o.Temperature, TopP: o.TopP, MinP: o.MinP, Seed: o.Seed}
		ktMust(t, sm.check(100000))
		params := ktUpload(t, v, sm.params(0), 0)
		ctr := ktCounters(t, v, -1, 10, 11, 0)
		out := v.alloc(t, 4)
		ring := ktRing(t, v)
		top := v.alloc(t, 2*K*4)
		trace := v.alloc(t, (2+K)*8)
		var last int32
		spread, zeros, draws := 0, 0, 0
		seen := map[int32]bool{}
		for step := range steps {
			x := ktUniform(r, 3000, -3, 3)
			switch step % 10 {
			case 1: // NaN weights: nothing to draw from
				for j := range x {
					x[j] = float32(math.NaN())
				}
			case 3: // ties across the top
				for j := 0; j < 3000; j += 50 {
					x[j] = 3
				}
			case 5: // 20 numbers, then NaNs fill the top k
				for j := 20; j < 3000; j++ {
					x[j] = float32(math.NaN())
				}
			case 7: // an overflow: the +Inf logit takes all the probability
				x[11] = float32(math.Inf(1))
			case 8: // every logit -Inf: equal, so uniform over the top k
				for j := range x {
					x[j] = float32(math.Inf(-1))
				}
			case 9:
				for j := 10; j < 3000; j++ {
					x[j] = float32(math.Inf(-1))
				}
			}
			ids, vals := ktTopK(x, K)
			ktPut(t, v, top, vals)
			ktPut(t, v, top.Add(4*K), ids)
			want, err := host.SampleTop(ids[:o.TopK], vals[:o.TopK])
			rs := cuda.HostSlice[int32](ring, 0, 2)
			rs[0], rs[1] = int32(ktNaN), int32(ktNaN)
			ktMust(t, v.k.SampleDraw(out, ring.DevPtr(), ctr, top, params, trace))
			got := ktGet[int32](t, v, out, 1)[0]
			ktCheckRing(t, ring, true, 10+step, got) // the counters start at pos 10
			if step%10 == 1 {
				tok := ktGet[int32](t, v, ctr, 1)[0]
				if !errors.Is(err, model.ErrNaNLogits) || got != kernels.NoToken || tok != 0 {
					t.Fatalf("case %d step %d, all NaN: host %v, device out %d and counters' token %d; want ErrNaNLogits, %d and 0", ci, step, err, got, tok, kernels.NoToken)
				}
				last = 0
				continue
			}
			ktMust(t, err)
			if got != want {
				t.Fatalf("case %d %+v, step %d: device drew %d, host %d", ci, o, step, got, want)
			}
			if step%10 == 7 && got != 11 {
				t.Fatalf("case %d step %d: drew %d past a +Inf logit at 11", ci, step, got)
			}
			tr := ktGet[float64](t, v, trace, 2+K)
			cands := sample.Filter(x, nil, o)
			if u := sample.Uniform(o.Seed, uint64(draws)); math.Float64bits(tr[0]) != math.Float64bits(u) {
				t.Fatalf("case %d step %d: device random number %v, host %v", ci, step, tr[0], u)
			}
			if int(tr[1]) != len(cands) {
				t.Fatalf("case %d step %d: device kept %v candidates, host %d", ci, step, tr[1], len(cands))
			}
			for i, c := range cands {
				if math.Float64bits(tr[2+i]) != math.Float64bits(c.P) || math.IsNaN(c.P) || ids[i] != c.ID {
					t.Fatalf("case %d step %d: candidate %d: device (%d, %v), host (%d, %v)", ci, step, i, ids[i], tr[2+i], c.ID, c.P)
				}
				if c.P == 0 {
					zeros++
				}
			}
			last = got
			draws++
			if rank := slices.Index(ids, got); !seen[got] && rank > 0 {
				spread++
			}
			seen[got] = true
		}
		p := ktGet[uint64](t, v, params, kernels.DrawParamsBytes/8)
		if idx := p[kernels.DrawIndex/8]; idx != uint64(draws) {
			t.Errorf("case %d: draw index %d after %d draws", ci, idx, draws)
		}
		c := ktGet[int32](t, v, ctr, kernels.CountersBytes/4)
		if c[kernels.CounterToken/4] != last || c[kernels.CounterPos/4] != 10+steps || c[kernels.CounterTKV/4] != 11+steps || c[kernels.CounterStep/4] != steps {
			t.Errorf("case %d: counters %v after %d draws, want token %d pos %d t_kv %d step %d", ci, c, steps, last, 10+steps, 11+steps, steps)
		}
		t.Logf("case %d %+v: %d draws equal, %d steps without; %d distinct tokens below the top one; %d zero probabilities", ci, o, draws, steps-draws, spread, zeros)
		// What the cases are there for must have happened: draws below the
		// top where k > 1, and at T = 0.001 weights below exp's range.
		if o.TopK > 1 && spread == 0 {
			t.Errorf("case %d: every draw took the top token", ci)
		}
		if o.Temperature < 0.01 && zeros == 0 {
			t.Errorf("case %d: no weight fell below exp's range", ci)
		}
	}
}

// TestGPUKernelRepeatPenalty: repeat_penalty appends the counters' token to
// its ring and penalises what sample.Penalize penalises over the same
// window, bit for bit, step after step with one stamp array: windows of 1,
// 3, 64 and the longest, histories shorter and longer than the window (the
// ring wrapped), duplicates, tokens outside the vocabulary, penalties above
// and below 1, logits positive, negative, zero and NaN.
func TestGPUKernelRepeatPenalty(t *testing.T) {
	v := ktGPU(t)
	const vocab = 5000
	r := ktRand(1301)
	for ci, c := range []struct {
		window, prompt int
		penalty        float32
	}{{1, 0, 1.3}, {3, 2, 1.3}, {64, 10, 1.1}, {64, 200, 0.7}, {kernels.PenaltyMaxWindow, 5000, 2}} {
		p := Penalty{Penalty: c.penalty, Window: c.window}
		ktMust(t, p.check())
		hist := make([]int32, c.prompt)
		for i := range hist {
			hist[i] = int32(r.IntN(40)) // few distinct tokens: duplicates in every window
		}
		pen := ktUpload(t, v, p.state(hist), 0)
		seen := ktUpload(t, v, make([]int32, vocab), 0)
		ctr := ktCounters(t, v, 0, 0, 1, 0)
		logits := v.alloc(t, 4*vocab)
		for step := range 6 {
			x := ktUniform(r, vocab, -5, 5)
			x[1], x[2], x[3] = 0, float32(math.NaN()), float32(math.Copysign(0, -1))
			tok := int32(r.IntN(40))
			switch step {
			case 2:
				tok = 3 // zero logits
			case 4:
				tok = 2 // NaN
			}
			ktSetCounters(t, v, ctr, tok, int32(len(hist)), int32(len(hist)+1), 0)
			hist = append(hist, tok)
			ktPut(t, v, logits, x)
			ktMust(t, v.k.RepeatPenalty(logits, ctr, pen, seen, vocab))
			want := append([]float32(nil), x...)
			sample.Penalize(want, hist, c.penalty, c.window)
			ktCheckBits(t, fmt.Sprintf("case %d step %d: penalised logits", ci, step), ktSameNaN(ktGet[float32](t, v, logits, vocab)), ktSameNaN(want))
			if t.Failed() {
				return
			}
		}
		st := ktGet[int64](t, v, pen.Add(kernels.PenaltyN), 1)[0]
		if st != int64(len(hist)) {
			t.Errorf("case %d: %d tokens appended, want %d", ci, st, len(hist))
		}
	}
	// Tokens outside the vocabulary in the history are skipped, as on the host.
	p := Penalty{Penalty: 1.5, Window: 4}
	pen := ktUpload(t, v, p.state([]int32{-1, vocab + 7, 9}), 0)
	seen := ktUpload(t, v, make([]int32, vocab), 0)
	ctr := ktCounters(t, v, 11, 3, 4, 0)
	x := ktUniform(r, vocab, -5, 5)
	logits := ktUpload(t, v, x, 0)
	ktMust(t, v.k.RepeatPenalty(logits, ctr, pen, seen, vocab))
	want := append([]float32(nil), x...)
	sample.Penalize(want, []int32{-1, vocab + 7, 9, 11}, 1.5, 4)
	ktCheckBits(t, "out-of-vocabulary history", ktGet[float32](t, v, logits, vocab), want)
}

// ktSameNaN replaces every NaN of x by one NaN: a NaN times the penalty is
// the GPU's canonical NaN and the host's input NaN, alike to every reader
// (sample.TopK ranks all NaNs alike).
func ktSameNaN(x []float32) []float32 {
	for i, f := range x {
		if f != f {
			x[i] = float32(math.NaN())
		}
	}
	return x
}

// ktKVCaches is a layer's f16 and e4m3 KV caches with the e4m3 scales, as
// attn_prep and kv_store fill them: [n_kv][capacity][dh] each.
type ktKVCaches struct {
	k16, v16, k8, v8, ks, vs cuda.DevPtr
	n, scales                int // elements a cache, scales a side
}

// ktRandKVCaches draws random contents for a layer's caches once and
// returns a function that uploads a fresh copy of them (for a reference
// sequence and the kernel under test to write alike).
func ktRandKVCaches(t *testing.T, v *ktEnv, r *rand.Rand, nkv, capy, dh int) func() ktKVCaches {
	n := nkv * capy * dh
	c16 := make([]uint16, 2*n)
	c8 := make([]uint8, 2*n)
	for i := range c16 {
		c16[i], c8[i] = uint16(r.Uint32()), uint8(r.Uint32())
	}
	sc := ktUniform(r, 2*nkv*capy, 0, 1)
	return func() ktKVCaches {
		return ktKVCaches{ktUpload(t, v, c16[:n], 0), ktUpload(t, v, c16[n:], 0), ktUpload(t, v, c8[:n], 0),
			ktUpload(t, v, c8[n:], 0), ktUpload(t, v, sc[:nkv*capy], 0), ktUpload(t, v, sc[nkv*capy:], 0), n, nkv * capy}
	}
}

// check fails t unless c holds want's bytes in every cache and scale.
func (c ktKVCaches) check(t *testing.T, v *ktEnv, prefix, suffix string, want ktKVCaches) {
	t.Helper()
	for _, b := range []struct {
		name      string
		got, want cuda.DevPtr
		bytes     int
	}{
		{"k f16 cache", c.k16, want.k16, 2 * c.n}, {"v f16 cache", c.v16, want.v16, 2 * c.n},
		{"k e4m3 cache", c.k8, want.k8, c.n}, {"v e4m3 cache", c.v8, want.v8, c.n},
		{"k scales", c.ks, want.ks, 4 * c.scales}, {"v scales", c.vs, want.vs, 4 * c.scales},
	} {
		ktCheckBytes(t, prefix+b.name+suffix, ktGet[byte](t, v, b.got, b.bytes), ktGet[byte](t, v, b.want, b.bytes))
	}
}

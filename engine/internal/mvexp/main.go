// Command mvexp benchmarks the matvec variants of mvexp.cu against the
// engine's kernels on the decode shapes of the 0.8B and 9B presets: each
// variant's output is checked against a float64 reference, then timed with
// CUDA events over enough weight copies to defeat the L2. It is the record
// behind docs/perf.md step 6 (scripts/gpu/run6.sh ran it):
//
//	nvcc -O3 -arch=sm_90 -cubin -o bin/mvexp.cubin engine/internal/mvexp/mvexp.cu
//	CGO_ENABLED=0 go build -o bin/mvexp ./engine/internal/mvexp
//	bin/mvexp -cubin bin/mvexp.cubin
//
// The engine's matvec_q8_0_wide reads its scales in lane order (docs/perf.md
// step 56), which mvexp uploads for it beside the plain ones.
// The "engine" rows are the engine's own matvec kernels (at the time of step
// 6 these were the session-1 kernels, commit c03d01b, whose q8_0 kernel read
// ggml's blocks; check that commit out to reproduce them). The mvg_ variants
// (docs/perf.md step 12) instantiate the engine's template with its
// experiment switches; they and the engine rows are timed on one block per
// row unit and on the engine's grid (SMs × resident blocks, each looping).
//
// mma.cuh (included by mvexp.cu) holds the tensor-core kernels of docs/perf.md
// steps 28 and 29: mma_q8_ (q8_0, the engine's layout or tileQ8's) and
// mmak_q4_ (the engine's Q4_K kernel, kernels/matvec_q4k.cu, at other
// geometries KW and ring slots S, on ktile's Q4_K tiles; an output must equal
// the engine kernel's of the same KW bit for bit); mvk_q4_cuda is the
// CUDA-core Q4_K kernel the engine ran before; scripts/gpu/run56.sh to
// run59.sh ran them (step 35's forms, run77 and run78: commit a7b69b7).
// mmak_q6_ are the engine's Q6_K kernel (kernels/matvec_q6k.cu, step 39) at
// other geometries, on ktile's Q6_K tiles, bit for bit as mmak_q4_; mvk_q6_cuda
// is the CUDA-core Q6_K kernel the engine ran before (its split layout: 208
// bytes per superblock in W, the f16 d in S), and mmk6_ step 31's Q6_K form
// (mmk6.cuh, run62). -xnorm runs the kernels with the RMSNorm fused, as a
// decode step runs its projections: without it the CUDA-core kernels read x
// from global memory and look slower on the large shapes than they are in a
// step (step 31, run65 and run66).
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/internal/evtime"
	"github.com/memra-ai/memra/engine/internal/ktile"
	"github.com/memra-ai/memra/kernels"
)

type variant struct {
	name      string
	r, kw     int
	q8, xs    bool
	engine    bool // the engine's own kernel, or mvk_ (the engine's parameters)
	lane      bool // q8_0 scales in lane order (kernels.Q8LaneLayout: matvec_q8_0_wide)
	mma       bool // the tensor-core kernels (mma.cuh's, the engine's K-quant ones): the engine's parameters, x staged in shared memory
	tiled     bool // an mma kernel reading a tiled layout (W = the tiles: tileQ8's, ktile's; S unused or absent)
	q6k       bool // Q6_K weights: the split layout (mvk_q6_cuda) or ktile.Q6K's tiles (the engine's matvec_q6_k, mmak_q6_, mmk6_)
	q4k       bool // Q4_K weights: ggml's blocks (mvk_q4_cuda) or ktile.Q4K's tiles (the engine's matvec_q4_k, mmak_q4_)
	mvg       bool // the engine's template: (y, W, S, x, rows, cols), S null for bf16
	ring      int  // mmak_ and the engine's K-quant kernels: tile slots per warp in shared memory (memra_mvt's S)
	fn        cuda.Function
	rowsBlock int
}

func main() {
	cubin := flag.String("cubin", "bin/mvexp.cubin", "the compiled mvexp.cu")
	only := flag.String("shapes", "", "rowsxcols,... (default: decode shapes)")
	match := flag.String("variants", "", "time only the variants (and engine kernels) whose names contain this")
	xnorm := flag.Bool("xnorm", false, "fuse the RMSNorm into the kernels that take it (the engine's, mvk_, mma_, mmak_, mmk6_; the others are skipped), "+
		"x normalised with a norm weight in shared memory as a decode step's projections run; without it x is read as it is")
	flag.Parse()
	if err := run(*cubin, *only, *match, *xnorm); err != nil {
		fmt.Fprintln(os.Stderr, "mvexp:", err)
		os.Exit(1)
	}
}

func parseVariants(names []string) []variant {
	var vs []variant
	for _, n := range names {
		var v variant
		v.name = n
		if n == "mvk_q4_cuda" || n == "mvk_q6_cuda" { // memra_mv's K-quant instantiations: R4 KW2, the engine's parameters
			v.q4k, v.q6k, v.engine, v.r, v.kw, v.rowsBlock = n == "mvk_q4_cuda", n == "mvk_q6_cuda", true, 4, 2, 16
			vs = append(vs, v)
			continue
		}
		if strings.HasPrefix(n, "mmaq8r_") { // q8_0 on tileQ8's tiles through memra_mvt
			v.mma, v.tiled, v.q8, v.r = true, true, true, 16
			fmt.Sscanf(n, "mmaq8r_k%d_s%d", &v.kw, &v.ring)
			v.rowsBlock = 8 / v.kw * v.r
			vs = append(vs, v)
			continue
		}
		if strings.HasPrefix(n, "mmak_") || strings.HasPrefix(n, "mmk6_") {
			// Tensor-core K-quant kernels on ktile's tiles: 16-row tiles, KW.
			v.mma, v.tiled = true, true
			if strings.HasPrefix(n, "mmak_") {
				var q int
				fmt.Sscanf(n, "mmak_q%d_k%d_s%d", &q, &v.kw, &v.ring)
				v.q4k, v.q6k = q == 4, q == 6
			} else {
				var u int
				fmt.Sscanf(n, "mmk6_q6_k%d_u%d", &v.kw, &u)
				v.q6k = true
			}
			v.r = 16
			v.rowsBlock = 8 / v.kw * v.r
			vs = append(vs, v)
			continue
		}
		if strings.HasPrefix(n, "mma_q8_") {
			v.mma, v.q8 = true, true
			var t, u, l int
			fmt.Sscanf(n, "mma_q8_t%d_k%d_u%d_l%d", &t, &v.kw, &u, &l)
			v.tiled = l == 1
			v.r = 16 * t // rows per warp group
			v.rowsBlock = 8 / v.kw * v.r
			vs = append(vs, v)
			continue
		}
		if rest, ok := strings.CutPrefix(n, "mvg_"); ok {
			v.mvg = true
			v.q8 = strings.HasPrefix(rest, "q8_")
			var u, tb, pf int
			fmt.Sscanf(rest[strings.IndexByte(rest, '_')+1:], "r%d_k%d_u%d_t%d_p%d", &v.r, &v.kw, &u, &tb, &pf)
		} else if strings.HasPrefix(n, "mvx_q8") {
			v.q8 = true
			var u int
			fmt.Sscanf(n, "mvx_q8_r%d_k%d_u%d", &v.r, &v.kw, &u)
		} else {
			var u, s int
			fmt.Sscanf(n, "mvx_bf16_r%d_k%d_u%d_s%d", &v.r, &v.kw, &u, &s)
			v.xs = s == 1
		}
		v.rowsBlock = 8 / v.kw * v.r
		vs = append(vs, v)
	}
	return vs
}

var expNames = []string{
	"mvx_bf16_r1_k1_u4_s0", "mvx_bf16_r2_k1_u2_s0", "mvx_bf16_r2_k1_u4_s0", "mvx_bf16_r4_k1_u2_s0",
	"mvx_bf16_r4_k1_u4_s0", "mvx_bf16_r2_k2_u4_s0", "mvx_bf16_r4_k2_u2_s0", "mvx_bf16_r4_k4_u2_s0",
	"mvx_bf16_r8_k8_u2_s0", "mvx_bf16_r2_k8_u4_s0", "mvx_bf16_r4_k8_u4_s0", "mvx_bf16_r2_k1_u4_s1",
	"mvx_bf16_r4_k2_u2_s1", "mvx_bf16_r4_k4_u4_s1",
	"mvx_q8_r1_k1_u4", "mvx_q8_r2_k1_u2", "mvx_q8_r2_k1_u4", "mvx_q8_r4_k1_u2", "mvx_q8_r4_k1_u4",
	"mvx_q8_r2_k2_u4", "mvx_q8_r4_k2_u2", "mvx_q8_r4_k4_u2", "mvx_q8_r2_k8_u4", "mvx_q8_r4_k8_u2",
	"mvx_q8_r8_k8_u2",
	"mvg_bf16_r4_k4_u2_t0_p0", "mvg_bf16_r4_k4_u2_t0_p1", "mvg_bf16_r4_k8_u4_t0_p0", "mvg_bf16_r4_k8_u4_t1_p0",
	"mvg_bf16_r4_k8_u4_t0_p1", "mvg_bf16_r4_k8_u4_t1_p1", "mvg_bf16_r1_k1_u4_t0_p0", "mvg_bf16_r1_k1_u4_t0_p1",
	"mvg_q8_r4_k1_u2_t0_p0_b3", "mvg_q8_r4_k1_u2_t0_p1_b3", "mvg_q8_r2_k8_u4_t0_p0_b3", "mvg_q8_r2_k8_u4_t1_p0_b3",
	"mvg_q8_r2_k8_u4_t0_p1_b3", "mvg_q8_r2_k8_u4_t1_p1_b3", "mvg_q8_r4_k8_u2_t0_p0", "mvg_q8_r4_k8_u2_t1_p0",
	"mvg_q8_r4_k8_u4_t1_p0", "mvg_q8_r8_k8_u2_t1_p0", "mvg_q8_r4_k4_u2_t1_p0",
	"mvg_q8_r16_k8_u1_t1_p0_b2", "mvg_q8_r8_k8_u1_t1_p0_b2", "mvg_q8_r8_k8_u1_t1_p0_b3", "mvg_q8_r8_k4_u2_t1_p0_b2",
	"mvg_q8_r4_k4_u2_t1_p0_b3", "mvg_q8_r2_k4_u2_t1_p0_b4", "mvg_q8_r4_k8_u1_t1_p0_b3", "mvg_q8_r4_k2_u2_t1_p0_b3",
	"mvg_q8_r8_k1_u2_t0_p0_b2", "mvg_q8_r4_k1_u4_t0_p0_b2", "mvg_q8_r2_k1_u4_t0_p0_b4",
	"mma_q8_t1_k8_u4_l0", "mma_q8_t1_k8_u4_l1", "mma_q8_t1_k4_u4_l0", "mma_q8_t1_k4_u4_l1", "mma_q8_t2_k4_u2_l1",
	"mma_q8_t1_k2_u4_l0", "mma_q8_t1_k2_u4_l1", "mma_q8_t2_k2_u2_l1", "mma_q8_t1_k8_u2_l1", "mma_q8_t2_k8_u2_l1",
	"mma_q8_t1_k4_u2_l1",
	"mmak_q4_k4_s2_b0", "mmak_q4_k4_s3_b0", "mmak_q4_k4_s4_b0", "mmak_q4_k8_s3_b0", "mmak_q4_k8_s4_b0", "mmak_q4_k2_s2_b0",
	"mmak_q4_k2_s4_b0", "mmak_q4_k1_s2_b0", "mmak_q4_k1_s4_b0",
	"mvk_q4_cuda",
	"mmaq8r_k4_s2_b0", "mmaq8r_k4_s3_b0", "mmaq8r_k8_s2_b0", "mmaq8r_k8_s3_b0", "mmaq8r_k2_s2_b0", "mmaq8r_k2_s3_b0",
	"mmaq8r_k1_s2_b0", "mmaq8r_k1_s3_b0",
	"mmak_q6_k4_s2_b0", "mmak_q6_k4_s3_b0", "mmak_q6_k4_s4_b0", "mmak_q6_k8_s2_b0", "mmak_q6_k8_s3_b0", "mmak_q6_k8_s4_b0",
	"mmak_q6_k2_s2_b0", "mmak_q6_k2_s3_b0",
	"mvk_q6_cuda",
	"mmk6_q6_k4_u1_b0", "mmk6_q6_k8_u1_b0", "mmk6_q6_k2_u1_b0", "mmk6_q6_k1_u2_b0", "mmk6_q6_k4_u2_b0", "mmk6_q6_k4_u1_b3",
}

// engineVariants are the engine's matvec kernels of the types timed here,
// less the lean forms, which run only where a GPU lacks the shared memory
// of the others.
func engineVariants() []variant {
	var vs []variant
	for _, mk := range kernels.MatvecKernels() {
		if mk.GgmlType != 30 && mk.GgmlType != 8 && mk.GgmlType != 12 && mk.GgmlType != 14 || mk.Lean { // bf16, q8_0, Q4_K, Q6_K
			continue
		}
		v := variant{name: "engine " + mk.Name, engine: true, q8: mk.GgmlType == 8, q4k: mk.GgmlType == 12, q6k: mk.GgmlType == 14,
			rowsBlock: mk.RowsPerBlock, lane: mk.LaneScales()}
		if mk.TensorCore { // the K-quant kernels on ktile's tiles: (8/KW) warp groups of one 16-row tile per unit
			v.mma, v.tiled, v.ring, v.r, v.kw = true, true, mk.Ring, 16, 8*16/mk.RowsPerBlock
		}
		vs = append(vs, v)
	}
	return vs
}

// sharedBytes is the dynamic shared memory of v's launches over cols
// columns: x's copy (split, or normalised) and, for memra_mvt's kernels, as
// kernels.MatvecKernel.Shared, the runs' sums of x (room kept for Q6_K too)
// and the rings.
func (v variant) sharedBytes(cols int, xnorm bool) int {
	n := 0
	if v.xs || v.mma || xnorm {
		n = cols * 4
	}
	if v.ring > 0 {
		tile := ktile.Q4K.Bytes
		if v.q6k {
			tile = ktile.Q6K.Bytes
		} else if v.q8 {
			tile = 8 * mmaTileBytes
		}
		n += cols/32*4 + 8*v.ring*tile
	}
	return n
}

func run(cubin, only, match string, xnorm bool) error {
	e, err := cuda.New(0)
	if err != nil {
		return err
	}
	defer e.Close()
	mainMod, err := e.LoadModule(kernels.Fatbin())
	if err != nil {
		return err
	}
	expMod, err := e.LoadModuleFile(cubin)
	if err != nil {
		return err
	}
	var names []string
	for _, n := range expNames {
		if strings.Contains(n, match) {
			names = append(names, n)
		}
	}
	vs := parseVariants(names)
	for i := range vs {
		if vs[i].fn, err = e.Function(expMod, vs[i].name); err != nil {
			return err
		}
	}
	eng := engineVariants()
	for i := range eng {
		if eng[i].fn, err = e.Function(mainMod, strings.TrimPrefix(eng[i].name, "engine ")); err != nil {
			return err
		}
	}
	vs = append(eng, vs...)
	for i := range vs {
		if vs[i].mma { // x's split copy: cols*4 bytes, 48 KiB and more at 12,288 columns; the rings' kernels add cols/8 and the rings
			limit := 96 << 10
			if vs[i].ring > 0 {
				limit = 200 << 10
			}
			if err := e.SetFuncAttribute(vs[i].fn, cuda.FuncMaxDynamicSharedSizeBytes, limit); err != nil {
				return fmt.Errorf("%s: %w", vs[i].name, err)
			}
		}
	}

	copyBW, err := copyBandwidth(e)
	if err != nil {
		return err
	}
	fmt.Printf("copy bandwidth (read+write): %.3f TB/s\n", copyBW/1e12)

	shapes := [][2]int{{4096, 12288}, {12352, 4096}, {10240, 4096}, {4096, 4096}, {248320, 4096},
		{7168, 1024}, {1024, 3584}, {8224, 1024}, {1024, 2048}, {248320, 1024}}
	if only != "" {
		shapes = nil
		for _, s := range strings.Split(only, ",") {
			var r, c int
			fmt.Sscanf(s, "%dx%d", &r, &c)
			shapes = append(shapes, [2]int{r, c})
		}
	}
	for _, sh := range shapes {
		if err := bench(e, vs, sh[0], sh[1], xnorm); err != nil {
			return err
		}
	}
	return nil
}

func copyBandwidth(e *cuda.Engine) (float64, error) {
	const n = 1 << 30
	src, err := e.Alloc(n)
	if err != nil {
		return 0, err
	}
	defer e.Free(src)
	dst, err := e.Alloc(n)
	if err != nil {
		return 0, err
	}
	defer e.Free(dst)
	e.MemsetD8Async(src, 7, n)
	t, err := evtime.PerCall(e, 3, 5, 20, func(int) error { return e.CopyDtoDAsync(dst, src, n) })
	if err != nil {
		return 0, err
	}
	return 2 * n / t, nil
}

// f16 bits of (1 + k/1024) * 2^-8 (exponent field 7).
func f16Scale(k int) uint16 { return uint16(7<<10 | (k & 1023)) }

func f16Val(h uint16) float64 {
	return math.Ldexp(1+float64(h&1023)/1024, int(h>>10&31)-15)
}

func parallel(n int, fn func(lo, hi int, r *rand.Rand)) {
	w := runtime.NumCPU()
	var wg sync.WaitGroup
	for t := range w {
		lo, hi := n*t/w, n*(t+1)/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi, rand.New(rand.NewPCG(uint64(t)+1, uint64(n))))
		}()
	}
	wg.Wait()
}

// bench times the variants on one shape. With xnorm the kernels that take
// the engine's parameters get the norm fused (xnorm = 1, a norm weight in
// [0.5, 1.5)): the references then use x' = x / sqrt(mean(x²) + eps) · w,
// and the variants without those parameters are skipped.
func bench(e *cuda.Engine, vs []variant, rows, cols int, xnorm bool) error {
	fmt.Printf("\n== %d x %d\n", rows, cols)
	x := make([]float32, cols)
	r := rand.New(rand.NewPCG(9, 9))
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	const eps = 1e-6
	nw := make([]float32, cols)
	xr := make([]float64, cols) // the input the kernels multiply: x, or x' with the norm
	var ss float64
	for i := range x {
		nw[i] = 0.5 + r.Float32()
		xr[i] = float64(x[i])
		ss += xr[i] * xr[i]
	}
	if xnorm {
		inv := 1 / math.Sqrt(ss/float64(cols)+eps)
		for i := range xr {
			xr[i] *= inv * float64(nw[i])
		}
	}
	// bf16 weights; q8_0 weights in the repacked layout (quants, f16 scales).
	bf := make([]byte, rows*cols*2)
	qs := make([]byte, rows*cols)
	sc := make([]uint16, rows*cols/32)
	parallel(rows, func(lo, hi int, r *rand.Rand) {
		for i := lo * cols; i < hi*cols; i++ {
			binary.LittleEndian.PutUint16(bf[2*i:], uint16(math.Float32bits(float32(r.NormFloat64()))>>16))
			qs[i] = byte(r.IntN(256))
		}
		for i := lo * cols / 32; i < hi*cols/32; i++ {
			sc[i] = f16Scale(r.IntN(1024))
		}
	})
	// Q4_K: random codes and packed scales, d and dmin small f16 (ggml's
	// blocks for the engine's kernel; mma.cuh's tiles from the same bytes).
	var k4, k4t []byte
	var refQ4, magQ4 []float64
	if cols%256 == 0 {
		k4 = make([]byte, rows*cols/256*144)
		parallel(rows, func(lo, hi int, r *rand.Rand) {
			for i := lo * cols / 256; i < hi*cols/256; i++ {
				b := k4[144*i : 144*i+144]
				binary.LittleEndian.PutUint16(b[0:], f16Scale(r.IntN(1024)))
				binary.LittleEndian.PutUint16(b[2:], f16Scale(r.IntN(1024)))
				for j := 4; j < 144; j++ {
					b[j] = byte(r.IntN(256))
				}
			}
		})
		refQ4, magQ4 = make([]float64, rows), make([]float64, rows)
		parallel(rows, func(lo, hi int, _ *rand.Rand) {
			for i := lo; i < hi; i++ {
				var s, m float64
				for sb := range cols / 256 {
					b := k4[(i*cols/256+sb)*144:]
					d, dmin := f16Val(binary.LittleEndian.Uint16(b)), f16Val(binary.LittleEndian.Uint16(b[2:]))
					for v := range 256 {
						sc, mn := ktile.ScaleMin(b[4:16], v/32)
						a, off := d*float64(sc), dmin*float64(mn)
						q := float64(ktile.Code(b[16:144], v))
						xv := xr[sb*256+v]
						s += (a*q - off) * xv
						m += (math.Abs(a*q) + off) * math.Abs(xv)
					}
				}
				refQ4[i], magQ4[i] = s, m
			}
		})
		k4t = ktile.Q4K.Tile(k4, rows, cols)
	}
	// Q6_K: random codes and int8 scales, d a small f16: ktile.Q6K's tiles
	// (the engine's) and mvk_q6_cuda's split layout (208 bytes per
	// superblock in W, d in S).
	var k6t, k6w, k6s []byte
	var refQ6, magQ6 []float64
	if cols%256 == 0 {
		k6 := make([]byte, rows*cols/256*210)
		parallel(rows, func(lo, hi int, r *rand.Rand) {
			for i := lo * cols / 256; i < hi*cols/256; i++ {
				b := k6[210*i : 210*i+210]
				for j := range 208 {
					b[j] = byte(r.IntN(256))
				}
				binary.LittleEndian.PutUint16(b[208:], f16Scale(r.IntN(1024)))
			}
		})
		refQ6, magQ6 = make([]float64, rows), make([]float64, rows)
		parallel(rows, func(lo, hi int, _ *rand.Rand) {
			for i := lo; i < hi; i++ {
				var s, m float64
				for sb := range cols / 256 {
					b := k6[(i*cols/256+sb)*210:]
					d := f16Val(binary.LittleEndian.Uint16(b[208:]))
					for v := range 256 {
						w := d * float64(int8(b[192+v/16])) * float64(int(ktile.Code6(b, v))-32)
						s += w * xr[sb*256+v]
						m += math.Abs(w * xr[sb*256+v])
					}
				}
				refQ6[i], magQ6[i] = s, m
			}
		})
		k6t = ktile.Q6K.Tile(k6, rows, cols)
		n := rows * cols / 256
		k6w, k6s = make([]byte, 208*n), make([]byte, 2*n)
		for b := range n {
			copy(k6w[208*b:], k6[210*b:210*b+208])
			copy(k6s[2*b:], k6[210*b+208:210*b+210])
		}
	}
	refBF := make([]float64, rows)
	refQ8 := make([]float64, rows)
	magBF := make([]float64, rows)
	magQ8 := make([]float64, rows)
	parallel(rows, func(lo, hi int, _ *rand.Rand) {
		for i := lo; i < hi; i++ {
			var s, m, sq, mq float64
			for c := range cols {
				w := float64(math.Float32frombits(uint32(binary.LittleEndian.Uint16(bf[2*(i*cols+c):])) << 16))
				s += w * xr[c]
				m += math.Abs(w * xr[c])
				q := float64(int8(qs[i*cols+c])) * f16Val(sc[(i*cols+c)/32])
				sq += q * xr[c]
				mq += math.Abs(q * xr[c])
			}
			refBF[i], magBF[i], refQ8[i], magQ8[i] = s, m, sq, mq
		}
	})
	// The same scales in the wide q8_0 kernel's lane order, rows padded.
	_, stride := kernels.Q8LaneLayout(cols)
	scl := make([]uint16, rows*stride)
	plain, lane := cuda.AsBytes(sc), cuda.AsBytes(scl)
	for r := range rows {
		kernels.Q8LaneOrder(lane[r*2*stride:(r+1)*2*stride], plain[r*cols/16:(r+1)*cols/16], cols)
	}
	// Copies so the set exceeds L2 (decode streams many different matrices).
	copies := max(1, int((512<<20)/(rows*cols*2)))
	qt := tileQ8(qs, sc, rows, cols)
	type dev struct{ bf, q, s, sl, qt, k, kt, k6w, k6s, k6t cuda.DevPtr }
	var ds []dev
	for range copies {
		var d dev
		var err error
		if d.bf, err = upload(e, bf); err != nil {
			return err
		}
		if d.q, err = upload(e, qs); err != nil {
			return err
		}
		if d.s, err = upload(e, cuda.AsBytes(sc)); err != nil {
			return err
		}
		if d.sl, err = upload(e, cuda.AsBytes(scl)); err != nil {
			return err
		}
		if d.qt, err = upload(e, qt); err != nil {
			return err
		}
		if k4 != nil {
			if d.k, err = upload(e, k4); err != nil {
				return err
			}
			if d.kt, err = upload(e, k4t); err != nil {
				return err
			}
			if d.k6w, err = upload(e, k6w); err != nil {
				return err
			}
			if d.k6s, err = upload(e, k6s); err != nil {
				return err
			}
			if d.k6t, err = upload(e, k6t); err != nil {
				return err
			}
		}
		ds = append(ds, d)
	}
	defer func() {
		for _, d := range ds {
			e.Free(d.bf)
			e.Free(d.q)
			e.Free(d.s)
			e.Free(d.sl)
			e.Free(d.qt)
			if d.k != 0 {
				e.Free(d.k)
				e.Free(d.kt)
				e.Free(d.k6w)
				e.Free(d.k6s)
				e.Free(d.k6t)
			}
		}
	}()
	dx, err := upload(e, cuda.AsBytes(x))
	if err != nil {
		return err
	}
	defer e.Free(dx)
	dnw, err := upload(e, cuda.AsBytes(nw))
	if err != nil {
		return err
	}
	defer e.Free(dnw)
	dy, err := e.Alloc(uint64(rows * 4))
	if err != nil {
		return err
	}
	defer e.Free(dy)
	y := make([]float32, rows)
	// The TB/PF switches must not change a bit: each mvg_ output is compared
	// with the first one of the same kind, R, KW and U.
	family := map[string][]float32{}
	for _, v := range vs {
		old := !v.engine && !v.mvg && !v.mma
		if xnorm && !v.engine && !v.mma || xnorm && !v.mma && cols > (48<<10-1024)/4 { // no norm parameters; the engine's norm copy must fit 47 KiB
			continue
		}
		if (v.q4k || v.q6k || v.ring > 0) && cols%256 != 0 || !v.q8 && cols%8 != 0 || v.q8 && cols%32 != 0 || old && v.q8 && cols%512 != 0 || v.xs && cols*4 >= 48<<10 {
			continue
		}
		p := cuda.NewParams(10)
		units := (rows + v.rowsBlock - 1) / v.rowsBlock
		grid := [3]uint32{uint32(units), 1, 1}
		block := [3]uint32{256, 1, 1}
		shared := uint32(v.sharedBytes(cols, xnorm))
		if shared > 200<<10 {
			fmt.Printf("%-36s skipped: %d bytes of shared memory\n", v.name, shared)
			continue
		}
		// Parameters: (y, W, [S,] x, rows, cols) and, for the engine's
		// kernels, (mode, norm_w, xnorm, eps) = (store, none, 0, 1e-6).
		set := func(d dev) {
			i := 0
			put := func(f func(int)) { f(i); i++ }
			put(func(i int) { p.SetPtr(i, dy) })
			if v.q6k && v.tiled {
				put(func(i int) { p.SetPtr(i, d.k6t) })
			} else if v.q6k {
				put(func(i int) { p.SetPtr(i, d.k6w) })
				put(func(i int) { p.SetPtr(i, d.k6s) })
			} else if v.q4k && v.tiled {
				put(func(i int) { p.SetPtr(i, d.kt) })
			} else if v.q4k {
				put(func(i int) { p.SetPtr(i, d.k) })
			} else if v.tiled && v.ring > 0 { // memra_mvt's parameters: no S
				put(func(i int) { p.SetPtr(i, d.qt) })
			} else if v.tiled {
				put(func(i int) { p.SetPtr(i, d.qt) })
				put(func(i int) { p.SetPtr(i, 0) })
			} else if v.q8 && v.lane {
				put(func(i int) { p.SetPtr(i, d.q) })
				put(func(i int) { p.SetPtr(i, d.sl) })
			} else if v.q8 {
				put(func(i int) { p.SetPtr(i, d.q) })
				put(func(i int) { p.SetPtr(i, d.s) })
			} else {
				put(func(i int) { p.SetPtr(i, d.bf) })
				if v.mvg {
					put(func(i int) { p.SetPtr(i, 0) })
				}
			}
			put(func(i int) { p.SetPtr(i, dx) })
			put(func(i int) { p.SetI32(i, int32(rows)) })
			put(func(i int) { p.SetI32(i, int32(cols)) })
			if v.engine || v.mma {
				put(func(i int) { p.SetI32(i, 0) }) // mode: store
				if xnorm {
					put(func(i int) { p.SetPtr(i, dnw) })
					put(func(i int) { p.SetI32(i, 1) })
				} else {
					put(func(i int) { p.SetPtr(i, 0) })
					put(func(i int) { p.SetI32(i, 0) })
				}
				put(func(i int) { p.SetF32(i, eps) })
			}
		}
		if err := e.MemsetD32Async(dy, 0x7fc00000, uint64(rows)); err != nil {
			return err
		}
		set(ds[0])
		if err := e.LaunchParams(v.fn, grid, block, shared, p); err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		if err := e.CopyDtoH(cuda.AsBytes(y), dy); err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		ref, mag := refBF, magBF
		if v.q8 {
			ref, mag = refQ8, magQ8
		} else if v.q4k {
			ref, mag = refQ4, magQ4
		} else if v.q6k {
			ref, mag = refQ6, magQ6
		}
		worst := 0.0
		for i := range rows {
			d := math.Abs(float64(y[i])-ref[i]) / mag[i]
			if math.IsNaN(d) {
				d = math.Inf(1)
			}
			worst = max(worst, d)
		}
		bytes := float64(rows * cols * 2)
		if v.q8 {
			bytes = float64(rows * cols / 32 * 34)
		} else if v.q4k {
			bytes = float64(rows * cols / 256 * 144)
		} else if v.q6k {
			bytes = float64(rows * cols / 256 * 210)
		}
		ok := "ok"
		if worst > 1e-5 {
			ok = "WRONG"
		}
		if v.ring > 0 {
			// memra_mvt of one type, equal KW, whatever S: one order of
			// sums, the same bits as the engine's kernel of that KW.
			key := fmt.Sprintf("q4k/kw%d", v.kw)
			if v.q6k {
				key = fmt.Sprintf("q6k/kw%d", v.kw)
			} else if v.q8 {
				key = fmt.Sprintf("q8r/kw%d", v.kw)
			}
			if ref, seen := family[key]; !seen {
				family[key] = append([]float32(nil), y...)
			} else {
				for i := range y {
					if math.Float32bits(y[i]) != math.Float32bits(ref[i]) {
						ok = "WRONG(bits differ from " + key + ")"
						break
					}
				}
			}
		}
		if v.mvg {
			key := v.name[:strings.Index(v.name, "_t")]
			if ref, seen := family[key]; !seen {
				family[key] = append([]float32(nil), y...)
			} else {
				for i := range y {
					if math.Float32bits(y[i]) != math.Float32bits(ref[i]) {
						ok = "WRONG(switches changed bits)"
						break
					}
				}
			}
		}
		grids := []struct {
			name   string
			blocks int
		}{{"", units}}
		if v.engine || v.mvg || v.mma {
			per, err := e.MaxActiveBlocksPerSM(v.fn, 256, int(shared))
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			grids = []struct {
				name   string
				blocks int
			}{{"/units", units}, {"/resident", min(units, e.Info().SMs*per)}}
		}
		for _, gr := range grids {
			grid := [3]uint32{uint32(gr.blocks), 1, 1}
			if gr.blocks != units {
				// The looping grid must compute the same rows: check it too.
				if err := e.MemsetD32Async(dy, 0x7fc00000, uint64(rows)); err != nil {
					return err
				}
				set(ds[0])
				if err := e.LaunchParams(v.fn, grid, block, shared, p); err != nil {
					return fmt.Errorf("%s: %w", v.name, err)
				}
				y2 := make([]float32, rows)
				if err := e.CopyDtoH(cuda.AsBytes(y2), dy); err != nil {
					return fmt.Errorf("%s: %w", v.name, err)
				}
				for i := range y2 {
					if math.Float32bits(y2[i]) != math.Float32bits(y[i]) {
						ok = "WRONG(grid)"
					}
				}
			}
			t, err := evtime.PerCall(e, 3, 5, 30, func(i int) error {
				set(ds[i%len(ds)])
				return e.LaunchParams(v.fn, grid, block, shared, p)
			})
			if err != nil {
				return fmt.Errorf("%s: %w", v.name, err)
			}
			fmt.Printf("%-36s %8.2f µs %6.3f TB/s  err %.1e %s\n", v.name+gr.name, t*1e6, bytes/t/1e12, worst, ok)
		}
	}
	return nil
}

// mmaTileBytes is mma.cuh's MMA_TILE_BYTES: one 16-row × 32-column tile.
const mmaTileBytes = 544

// tileQ8 lays q8_0 quants qs [rows][cols] and scales sc [rows][cols/32] out
// as mma.cuh's tiled layout (MMA_TILE_BYTES per 16 rows × 32 columns; rows
// past the end are zero).
func tileQ8(qs []byte, sc []uint16, rows, cols int) []byte {
	const tileBytes = mmaTileBytes
	nb := cols / 32
	tiles := (rows + 15) / 16
	out := make([]byte, tiles*nb*tileBytes)
	for t := range tiles {
		for b := range nb {
			o := out[(t*nb+b)*tileBytes:]
			for l := range 32 {
				g, c := l/4, l%4
				for h, r := range [2]int{16*t + g, 16*t + g + 8} {
					if r < rows {
						copy(o[16*l+8*h:16*l+8*h+8], qs[r*cols+32*b+8*c:])
					}
				}
			}
			for g := range 8 {
				var lo, hi uint16
				if r := 16*t + g; r < rows {
					lo = sc[r*nb+b]
				}
				if r := 16*t + g + 8; r < rows {
					hi = sc[r*nb+b]
				}
				binary.LittleEndian.PutUint32(o[512+4*g:], uint32(lo)|uint32(hi)<<16)
			}
		}
	}
	return out
}

func upload(e *cuda.Engine, b []byte) (cuda.DevPtr, error) {
	p, err := e.Alloc(uint64(len(b)))
	if err != nil {
		return 0, err
	}
	return p, e.CopyHtoD(p, b)
}

package gpu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/internal/par"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// screen is decode's 8-bit copy of a 16-bit logits matrix
// (kernels/logits_screen.cu, docs/perf.md steps 132 and 133): a greedy
// step reads the copy, about half the matrix's bytes, and then only the
// rows whose logit could be the largest, and picks the token the whole
// matrix would; a step that selects the top k (the draw, DecodeTop) reads
// only the rows that could rank among them, and selects the same k.
// Zero when the step reads the whole matrix (Options.FullLogits, or a
// logits matrix of another type).
type screen struct {
	q dtensor     // [vocab][cols] q8_0, uploaded as every q8_0 matrix is
	c cuda.DevPtr // [vocab] f32: row r's logit is within c[r]·|x'|_1 of the copy's
}

func (s screen) on() bool { return s.q.ptr != 0 }

// screenable says whether decode steps can screen the logits matrix t: a
// 16-bit matrix on the plain kernel (matvec_bf16 or _f16, whose sums
// logits_screen_verify repeats: the wide kernels split a row otherwise),
// of whole q8_0 blocks.
func screenable(t *model.Tensor) bool {
	if t == nil {
		return false
	}
	typ, rows, cols := deviceType(t.Type, t.Cols()), t.Rows(), t.Cols()
	return (typ == gguf.TypeBF16 || typ == gguf.TypeF16) && !MatvecWide(typ, rows, cols) && cols%32 == 0
}

// screenRowBytes is a row of the copy in q8_0's GGUF bytes.
func screenRowBytes(cols int) int { return cols / 32 * gguf.TypeQ8_0.BlockBytes() }

// screenArenaBytes is what the copy and its coefficients take of the
// weights' arena (each buffer 256-byte aligned, as the arena places them;
// the copy's scales in the wide kernel's lane order, padding included,
// where its rows take that kernel: laneScales).
func screenArenaBytes(rows, cols int) uint64 {
	lane := laneScales(gguf.TypeQ8_0, rows, cols)
	return align(devBytes(gguf.TypeQ8_0, rows, cols, screenRowBytes(cols), lane)) + align(4*uint64(rows))
}

// screenRow writes src, a row of bf16 or f16 (typ) GGUF bytes, into dst
// as q8_0 blocks and returns its coefficient c: for any input x' the
// row's logit, as matvec_bf16/_f16 sums it, is within c·|x'|_1 of the
// copy's, as matvec_q8_0 sums it.
//
//	|L − A| ≤ |L − S| + |S − S′| + |S′ − A|
//	        ≤ γ·Σ|w·x| + max|w − d·q|·|x|_1 + γ·Σ|d·q·x|
//	        ≤ (max|w − d·q| + γ·(max|w| + max|d·q|))·|x|_1
//
// S and S′ are the exact sums of the row's and the copy's products, L
// and A the kernels'. γ = m·u/(1 − m·u), u = 2⁻²⁴, bounds the rounding of
// a float sum of m terms in any order, fused multiply-adds or not; m =
// 2·cols + 32 covers both kernels' chains (a q8_0 load's 16 products, then
// a row's loads, a warp's butterfly, the warps). The errors w − d·q are
// exact in float64 (w has 8 or 11 significant bits, d·q at most 19), and c
// is rounded up. A row holding a weight that is not finite, or whose block
// scale overflows f16, gets c = +Inf and a zero copy: always a candidate,
// its logit always summed in full.
func screenRow(typ gguf.Type, src, dst []byte) float32 {
	cols := len(src) / 2
	bb := gguf.TypeQ8_0.BlockBytes()
	// A bf16 or f16 value's exponent bits: all ones for Inf and NaN.
	expMask := uint16(0x7c00)
	if typ == gguf.TypeBF16 {
		expMask = 0x7f80
	}
	var emax, wmax, qmax float64
	var w [32]float32
	for b := 0; b < cols/32; b++ {
		var amax float32
		bad := false
		for i := range w {
			h := binary.LittleEndian.Uint16(src[2*(b*32+i):])
			bad = bad || h&expMask == expMask
			if typ == gguf.TypeBF16 {
				w[i] = math.Float32frombits(uint32(h) << 16)
			} else {
				w[i] = gguf.F16ToF32(h)
			}
			if a := math.Float32frombits(math.Float32bits(w[i]) & 0x7fffffff); a > amax {
				amax = a
			}
		}
		dh := gguf.F32ToF16(amax / 127)
		d := gguf.F16ToF32(dh)
		if bad || dh&0x7c00 == 0x7c00 {
			clear(dst[:cols/32*bb])
			return float32(math.Inf(1))
		}
		blk := dst[b*bb : (b+1)*bb]
		binary.LittleEndian.PutUint16(blk, dh)
		var id float32
		if d > 0 {
			id = 1 / d
		}
		var qa int32 // the block's largest |q|
		for i, v := range w {
			// Any q in ±127 keeps the bound: it is of the copy as written.
			// ±0.5 by x's sign, then truncation: to nearest, without the
			// branch a random rounding would mispredict.
			x := v * id
			q := int32(x + math.Float32frombits(0x3f000000|math.Float32bits(x)&0x80000000))
			q = max(-127, min(127, q))
			blk[2+i] = byte(int8(q))
			qa = max(qa, q, -q)
			// A plain comparison: the builtin max's NaN rules cost a third
			// of the loop, and no value here is NaN.
			if e := math.Abs(float64(v) - float64(d)*float64(q)); e > emax {
				emax = e
			}
		}
		wmax = max(wmax, float64(amax))
		qmax = max(qmax, float64(d)*float64(qa))
	}
	const u = 0x1p-24
	m := float64(2*cols + 32)
	gamma := m * u / (1 - m*u)
	c := (emax + gamma*(wmax+qmax)) * (1 + 0x1p-40) // the last two operations' rounding
	c32 := float32(c)
	if float64(c32) < c {
		c32 = math.Nextafter32(c32, float32(math.Inf(1)))
	}
	return c32
}

// screenHost is a logits matrix's copy (q8_0 GGUF rows) and coefficients,
// built on the host.
type screenHost struct {
	q []byte
	c []float32
}

// buildScreen builds t's copy and coefficients, every row in parallel. Load
// runs it beside the weights' upload, which leaves the CPUs idle while the
// bytes cross to the GPU.
func buildScreen(t *model.Tensor) screenHost {
	rows, cols := t.Rows(), t.Cols()
	typ := deviceType(t.Type, cols)
	srb := len(t.Data) / rows
	qrb := screenRowBytes(cols)
	h := screenHost{q: make([]byte, rows*qrb), c: make([]float32, rows)}
	par.Rows(rows, 256, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			h.c[i] = screenRow(typ, t.Data[i*srb:(i+1)*srb], h.q[i*qrb:(i+1)*qrb])
		}
	})
	return h
}

// placeScreen places t's copy h as place places a matrix (progress
// included) and uploads its coefficients.
func (g *Model) placeScreen(t *model.Tensor, h screenHost, place func(name string, typ gguf.Type, rows, cols int, table bool, rowOf func(int) []byte) dtensor) (screen, error) {
	rows, cols := t.Rows(), t.Cols()
	qrb := screenRowBytes(cols)
	d := place(t.Name+" (8-bit screen)", gguf.TypeQ8_0, rows, cols, false, func(i int) []byte { return h.q[i*qrb : (i+1)*qrb] })
	if d.ptr == 0 {
		return screen{}, nil // place said why
	}
	p, err := g.weights.Alloc(4 * uint64(rows))
	if err != nil {
		return screen{}, fmt.Errorf("gpu: upload %s's screen coefficients: %w", t.Name, err)
	}
	if err := g.e.CopyHtoD(p, cuda.AsBytes(h.c)); err != nil {
		return screen{}, fmt.Errorf("gpu: upload %s's screen coefficients: %w", t.Name, err)
	}
	return screen{q: d, c: p}, nil
}

// screened says whether step a ends through the screen: a greedy step
// whose token the device picks from the logits as they are (no penalty,
// no top-k for the host or the draw), with the logits not omitted.
func (g *Model) screened(a stepArgs) bool {
	return g.scr.on() && a.deviceToken && !a.draw && !a.penalty && !a.topK && !g.omit.logits
}

// screenedTop says whether step a's top k (the host's or the draw's)
// comes through the screen: not with the penalty, which reads every
// logit, nor where the argmax then picks the token from the logits
// (a device token without the draw). Its logits scratch is then not
// written.
func (g *Model) screenedTop(a stepArgs) bool {
	return g.scr.on() && (a.topK || a.draw) && (a.draw || !a.deviceToken) && !a.penalty && !g.omit.logits
}

// screenCopy runs the copy's products (the norm fused as the logits'
// would be) and logits_screen_bound, each chunk's largest lower bounds
// into top when not 0, and returns the input, as normed gave it the
// products, that the verify kernels take: x' itself, or x with the norm
// to fuse.
func (g *Model) screenCopy(cc *Cache, top cuda.DevPtr) (x, norm cuda.DevPtr, xnorm int32, err error) {
	c := &g.cfg
	s := &cc.s
	if err := g.normed(cc, g.norm, single(g.scr.q), mvStore, []cuda.DevPtr{s.screenA}); err != nil {
		return 0, 0, 0, err
	}
	x, norm, xnorm = s.x, g.norm.ptr, 1
	if !g.fusesNorm() {
		x, norm, xnorm = s.xn, 0, 0
	}
	// The coefficients, ScreenBytes' part beside the copy; not counted,
	// as ScreenBytes does not count them: the candidates' rows that the
	// next launch reads, and the norm weight that this launch and the next
	// read again where they fuse the norm.
	g.note(launchShape{}, 4*uint64(g.scr.q.rows), 0)
	err = g.k.LogitsScreenBound(s.screenLo, top, s.screenA, g.scr.c, x, norm, xnorm, c.NormEps, int32(c.NVocab), int32(c.NEmbd))
	return x, norm, xnorm, err
}

// screenedToken ends a greedy step through the screen: the copy's
// products, each argmax chunk's largest lower bound, the candidates' exact
// logits and their argmax into the argmax partials, and argmax_final,
// which ends the step as ever.
func (g *Model) screenedToken(cc *Cache) error {
	c := &g.cfg
	s := &cc.s
	x, norm, xnorm, err := g.screenCopy(cc, 0)
	if err != nil {
		return err
	}
	n, cols := int32(c.NVocab), int32(c.NEmbd)
	verify := g.k.LogitsScreenVerifyBF16
	if g.out.typ == gguf.TypeF16 {
		verify = g.k.LogitsScreenVerifyF16
	}
	if err := verify(s.amaxVal, s.amaxIdx, 0, s.screenA, g.scr.c, s.screenLo, g.out.ptr, x, norm, xnorm, c.NormEps, n, cols); err != nil {
		return err
	}
	return g.k.ArgMaxFinal(s.token, cc.tokenHost.DevPtr(), s.ctr, s.amaxVal, s.amaxIdx, n)
}

// screenTopBlocks is how many blocks logits_screen_top launches over n
// rows: the length, in kernels.TopKMax pairs, of the list its blocks fill.
func screenTopBlocks(n int) int { return (n + kernels.ScreenTopChunk - 1) / kernels.ScreenTopChunk }

// screenedTopK writes a step's top k (scratch top, as topK would) through
// the screen: the copy's products, each chunk's largest lower bounds, then
// the exact logits of the candidates (upper bound at least the k-th
// largest of those), whose top k is the full logits', selected in the same
// launch.
func (g *Model) screenedTopK(cc *Cache) error {
	c := &g.cfg
	s := &cc.s
	x, norm, xnorm, err := g.screenCopy(cc, s.screenTop)
	if err != nil {
		return err
	}
	top := g.k.LogitsScreenTopBF16
	if g.out.typ == gguf.TypeF16 {
		top = g.k.LogitsScreenTopF16
	}
	return top(s.top, s.screenList, s.screenDone, 0, s.screenA, g.scr.c, s.screenTop, g.out.ptr, x, norm, xnorm, c.NormEps, int32(c.NVocab), int32(c.NEmbd))
}

// ScreenBytes reports, when decode steps screen the logits, the logits
// matrix's bytes (in its GGUF type) and the bytes a greedy or sampled
// step reads in their place (the copy and its coefficients; the
// candidates' rows, a few KB to a few MB, not counted): bench's graph and
// sampled rows count those. 0, 0 otherwise.
func (g *Model) ScreenBytes() (full, screened uint64) {
	if !g.scr.on() {
		return 0, 0
	}
	return g.out.ggufBytes(), g.scr.q.ggufBytes() + 4*uint64(g.scr.q.rows)
}

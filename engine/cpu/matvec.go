package cpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/gguf"
)

// Weights stay in their GGUF type (the mmap) and are converted on the fly.
// F32, F16, BF16 and Q8_0 have fused dot products in Go (the types real
// unquantised and Q8_0 files use for nearly every byte); every other type is
// dequantised block by block with gguf.Dequantize into a stack buffer. On
// x86-64 with AVX2 and FMA, vector kernels replace them for BF16, F16, Q8_0,
// Q4_0, IQ4_NL, IQ4_XS and Q3_K-Q6_K (dot_amd64.go). All accumulation is
// f32, in several partial sums to shorten dependency chains.

// maxBlock is the largest block size of a supported type (k-quants: 256).
const maxBlock = 256

// kChunk is how many superblocks' scales the K-quant vector kernels
// (dot_amd64.go's dotK) unpack for one call: 4,096 columns, a 1 KiB buffer
// on the stack.
const kChunk = 16

// f16Table maps every IEEE half bit pattern to its float32 value; built once
// on first use and never written afterwards.
var f16Table = sync.OnceValue(func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = gguf.F16ToF32(uint16(i))
	}
	return &t
})

// dotFunc computes the dot product of one stored row with x (len(x) elements).
type dotFunc func(row []byte, x []float32) float32

// dotFor returns the dot product for type t, or an error if neither a fused
// kernel nor gguf.Dequantize handles it.
func dotFor(t gguf.Type) (dotFunc, error) {
	if f, ok := simdDot(t); ok {
		return f, nil
	}
	return goDot(t)
}

// goDot is dotFor without the vector kernels: what runs off amd64 or
// without AVX2 and FMA, and what tests check those kernels against on a
// CPU that has them (where dotFor never returns it).
func goDot(t gguf.Type) (dotFunc, error) {
	switch t {
	case gguf.TypeF32:
		return dotF32, nil
	case gguf.TypeF16:
		tab := f16Table()
		return func(row []byte, x []float32) float32 { return dotF16(tab, row, x) }, nil
	case gguf.TypeBF16:
		return dotBF16, nil
	case gguf.TypeQ8_0:
		tab := f16Table()
		return func(row []byte, x []float32) float32 { return dotQ8_0(tab, row, x) }, nil
	}
	bs, bb := t.BlockSize(), t.BlockBytes()
	if bs <= 0 || bs > maxBlock || bb <= 0 {
		return nil, fmt.Errorf("no CPU kernel for type %v", t)
	}
	if !gguf.CanDequantize(t) {
		return nil, fmt.Errorf("no CPU kernel for type %v", t)
	}
	return func(row []byte, x []float32) float32 { return dotBlocks(t, bs, bb, row, x) }, nil
}

// f32View reinterprets little-endian float32 bytes without copying when the
// slice is 4-byte aligned (always true for GGUF data, aligned to 32).
func f32View(b []byte) ([]float32, bool) {
	if len(b) == 0 || uintptr(unsafe.Pointer(&b[0]))%4 != 0 {
		return nil, false
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4), true
}

// The fused kernels walk row and x by re-slicing (x = x[8:]) and read
// fixed-size windows (x[:8:8]), which lets the compiler drop bounds checks;
// eight partial sums hide the f32 add latency. Measured on one core, this
// form runs about twice as fast as indexed loops with four sums.

func dotF32(row []byte, x []float32) float32 {
	w, ok := f32View(row)
	if !ok {
		var s float32
		for i := range x {
			s += math.Float32frombits(binary.LittleEndian.Uint32(row[4*i:])) * x[i]
		}
		return s
	}
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(x) >= 8 && len(w) >= 8 {
		ws, xs := w[:8:8], x[:8:8]
		s0 += ws[0] * xs[0]
		s1 += ws[1] * xs[1]
		s2 += ws[2] * xs[2]
		s3 += ws[3] * xs[3]
		s4 += ws[4] * xs[4]
		s5 += ws[5] * xs[5]
		s6 += ws[6] * xs[6]
		s7 += ws[7] * xs[7]
		w, x = w[8:], x[8:]
	}
	for i := range x {
		s0 += w[i] * x[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// BF16 → f32 is a 16-bit shift: element 2j of a little-endian uint32 is its
// low half (<<16), element 2j+1 its high half (mask).
func dotBF16(row []byte, x []float32) float32 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(x) >= 8 && len(row) >= 16 {
		u := binary.LittleEndian.Uint64(row[0:8])
		v := binary.LittleEndian.Uint64(row[8:16])
		xs := x[:8:8]
		a, b, c, d := uint32(u), uint32(u>>32), uint32(v), uint32(v>>32)
		s0 += math.Float32frombits(a<<16) * xs[0]
		s1 += math.Float32frombits(a&0xffff0000) * xs[1]
		s2 += math.Float32frombits(b<<16) * xs[2]
		s3 += math.Float32frombits(b&0xffff0000) * xs[3]
		s4 += math.Float32frombits(c<<16) * xs[4]
		s5 += math.Float32frombits(c&0xffff0000) * xs[5]
		s6 += math.Float32frombits(d<<16) * xs[6]
		s7 += math.Float32frombits(d&0xffff0000) * xs[7]
		x, row = x[8:], row[16:]
	}
	for i := range x {
		s0 += gguf.BF16ToF32(binary.LittleEndian.Uint16(row[2*i:])) * x[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

func dotF16(tab *[1 << 16]float32, row []byte, x []float32) float32 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(x) >= 8 && len(row) >= 16 {
		u := binary.LittleEndian.Uint64(row[0:8])
		v := binary.LittleEndian.Uint64(row[8:16])
		xs := x[:8:8]
		s0 += tab[uint16(u)] * xs[0]
		s1 += tab[uint16(u>>16)] * xs[1]
		s2 += tab[uint16(u>>32)] * xs[2]
		s3 += tab[uint16(u>>48)] * xs[3]
		s4 += tab[uint16(v)] * xs[4]
		s5 += tab[uint16(v>>16)] * xs[5]
		s6 += tab[uint16(v>>32)] * xs[6]
		s7 += tab[uint16(v>>48)] * xs[7]
		x, row = x[8:], row[16:]
	}
	for i := range x {
		s0 += tab[binary.LittleEndian.Uint16(row[2*i:])] * x[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// i8Table maps a byte to its int8 value as float32: a table load is cheaper
// than the sign-extend-and-convert per element.
var i8Table = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(int8(uint8(i)))
	}
	return t
}()

// Q8_0 block: f16 d, then 32 int8 q; value = d·q.
func dotQ8_0(tab *[1 << 16]float32, row []byte, x []float32) float32 {
	const bs, bb = 32, 34
	q8 := &i8Table
	var sum float32
	for len(x) >= bs && len(row) >= bb {
		blk := row[:bb:bb]
		d := tab[uint16(blk[0])|uint16(blk[1])<<8]
		xs := x[:bs:bs]
		var s0, s1, s2, s3 float32
		for i := 0; i < bs; i += 8 {
			u := binary.LittleEndian.Uint64(blk[2+i : 10+i])
			s0 += q8[uint8(u)] * xs[i]
			s1 += q8[uint8(u>>8)] * xs[i+1]
			s2 += q8[uint8(u>>16)] * xs[i+2]
			s3 += q8[uint8(u>>24)] * xs[i+3]
			s0 += q8[uint8(u>>32)] * xs[i+4]
			s1 += q8[uint8(u>>40)] * xs[i+5]
			s2 += q8[uint8(u>>48)] * xs[i+6]
			s3 += q8[uint8(u>>56)] * xs[i+7]
		}
		sum += d * ((s0 + s1) + (s2 + s3))
		x, row = x[bs:], row[bb:]
	}
	return sum
}

// dotBlocks dequantises one block at a time into a stack buffer.
func dotBlocks(t gguf.Type, bs, bb int, row []byte, x []float32) float32 {
	var buf [maxBlock]float32
	nb := len(x) / bs
	var sum float32
	for b := range nb {
		w := buf[:bs]
		_ = gguf.Dequantize(t, row[b*bb:(b+1)*bb], w) // type checked by dotFor
		xs := x[b*bs : (b+1)*bs]
		var s0, s1 float32
		i := 0
		for ; i+2 <= bs; i += 2 {
			s0 += w[i] * xs[i]
			s1 += w[i+1] * xs[i+1]
		}
		for ; i < bs; i++ {
			s0 += w[i] * xs[i]
		}
		sum += s0 + s1
	}
	return sum
}

// MatVecJob is one product dst = W·x for MatVecs.
type MatVecJob struct {
	Dst []float32     // [W.Rows()]
	W   *model.Tensor // {cols, rows} in ggml ne order, any supported type
	X   []float32     // [W.Cols()]
}

// MatVec computes dst[r] = Σ_c W[r][c]·x[c] for a weight matrix w of ggml
// shape {cols, rows} (rows of cols elements, any supported type, read in
// place); dst: [rows] f32, x: [cols] f32. Rows are split over the pool's
// workers (p may be nil: single-threaded).
func MatVec(p *Pool, dst []float32, w *model.Tensor, x []float32) error {
	return MatVecs(p, MatVecJob{Dst: dst, W: w, X: x})
}

// MatVecs runs several products in one parallel pass (their rows share the
// workers), cheaper than one MatVec each when the matrices are small.
func MatVecs(p *Pool, jobs ...MatVecJob) error {
	bound := make([]boundJob, len(jobs))
	for i, j := range jobs {
		if err := checkJob(j); err != nil {
			return err
		}
		d, err := dotFor(j.W.Type)
		if err != nil {
			return fmt.Errorf("matvec %s: %w", j.W.Name, err)
		}
		bound[i] = boundJob{j, d}
	}
	runJobs(p, bound)
	return nil
}

func checkJob(j MatVecJob) error {
	if err := checkTensor(j.W); err != nil {
		return fmt.Errorf("matvec: %w", err)
	}
	if len(j.X) != j.W.Cols() || len(j.Dst) != j.W.Rows() {
		return fmt.Errorf("matvec %s %v: x has %d elements, dst %d; want %d and %d",
			j.W.Name, j.W.Shape, len(j.X), len(j.Dst), j.W.Cols(), j.W.Rows())
	}
	return nil
}

// checkTensor refuses a tensor whose type, shape and data disagree, as a
// hand-built model.Tensor may (Load checks a file's): the kernels slice
// Data by RowBytes, which divides by the block size, and a row's partial
// last block would be dropped without a word.
func checkTensor(w *model.Tensor) error {
	if w == nil {
		return errors.New("nil tensor")
	}
	if len(w.Shape) < 1 {
		return fmt.Errorf("tensor %s: no shape", w.Name)
	}
	rb, err := gguf.RowBytes(w.Type, int64(w.Cols()))
	if err != nil {
		return fmt.Errorf("tensor %s %v: %w", w.Name, w.Shape, err)
	}
	size := rb
	for _, d := range w.Shape[1:] {
		if d < 0 || d > 0 && size > math.MaxInt64/int64(d) {
			return fmt.Errorf("tensor %s: shape %v", w.Name, w.Shape)
		}
		size *= int64(d)
	}
	if size != int64(len(w.Data)) {
		return fmt.Errorf("tensor %s %s %v: %d bytes of data, want %d", w.Name, w.Type, w.Shape, len(w.Data), size)
	}
	return nil
}

// boundJob is a MatVecJob with its dot kernel chosen.
type boundJob struct {
	MatVecJob
	dot dotFunc
}

// minChunkBytes keeps each worker's share of weights large enough that the
// hand-off (a channel send and a wake-up, a few µs) stays small beside it.
const minChunkBytes = 32 << 10

// runJobs splits the concatenated rows of all jobs over the pool.
func runJobs(p *Pool, jobs []boundJob) {
	total, rowBytes := 0, 0
	for _, j := range jobs {
		total += len(j.Dst)
		rowBytes = max(rowBytes, j.W.RowBytes())
	}
	minRows := max(1, minChunkBytes/max(rowBytes, 1))
	p.Parallel(total, minRows, func(_, lo, hi int) {
		base := 0
		for _, j := range jobs {
			rows := len(j.Dst)
			a, b := max(lo-base, 0), min(hi-base, rows)
			if a < b {
				rb := j.W.RowBytes()
				dot, data, x, dst := j.dot, j.W.Data, j.X, j.Dst
				for r := a; r < b; r++ {
					dst[r] = dot(data[r*rb:(r+1)*rb], x)
				}
			}
			base += rows
		}
	})
}

// DequantizeRow writes row r of w (len(dst) == w.Cols()) as f32; used for
// embedding lookups.
func DequantizeRow(dst []float32, w *model.Tensor, r int) error {
	if err := checkTensor(w); err != nil {
		return fmt.Errorf("dequantize: %w", err)
	}
	if r < 0 || r >= w.Rows() || len(dst) != w.Cols() {
		return fmt.Errorf("dequantize %s row %d: rows %d, dst %d elements, want %d", w.Name, r, w.Rows(), len(dst), w.Cols())
	}
	row := w.Row(r)
	switch w.Type {
	case gguf.TypeF32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(row[4*i:]))
		}
		return nil
	case gguf.TypeBF16:
		for i := range dst {
			dst[i] = gguf.BF16ToF32(binary.LittleEndian.Uint16(row[2*i:]))
		}
		return nil
	case gguf.TypeF16:
		for i := range dst {
			dst[i] = gguf.F16ToF32(binary.LittleEndian.Uint16(row[2*i:]))
		}
		return nil
	}
	if err := gguf.Dequantize(w.Type, row, dst); err != nil {
		return fmt.Errorf("dequantize %s row %d: %w", w.Name, r, err)
	}
	return nil
}

// Float32s copies an F32 tensor (norm weights, biases, conv taps) to a
// []float32; it fails for other types.
func Float32s(t *model.Tensor) ([]float32, error) {
	if err := checkTensor(t); err != nil {
		return nil, err
	}
	if t.Type != gguf.TypeF32 {
		return nil, fmt.Errorf("tensor %s: type %v, want F32", t.Name, t.Type)
	}
	out := make([]float32, len(t.Data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return out, nil
}

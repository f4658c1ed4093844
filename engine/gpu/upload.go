package gpu

import (
	"encoding/binary"
	"runtime"
	"sync"
	"unsafe"

	"github.com/memra-ai/memra/gguf"
)

// stageBytes bounds the host staging buffer of an upload that reorders rows
// (row-interleaved pairs, q8_0 repacking): big enough to keep the copy engine
// busy, small enough not to double a 1 GB tensor in host memory.
const stageBytes = 16 << 20

// q8Block is ggml's q8_0 block: an f16 scale d then 32 int8 quants.
const q8Block = 34

// repackQ8_0 splits ggml q8_0 blocks (src, len a multiple of 34) into their
// quants (q, 32 bytes per block) and f16 scales (s, 2 bytes per block): the
// device layout of q8_0 matrices, whose quant rows stay 16-byte aligned.
func repackQ8_0(q, s, src []byte) {
	n := len(src) / q8Block
	for b := range n {
		blk := src[b*q8Block : (b+1)*q8Block]
		s[2*b], s[2*b+1] = blk[0], blk[1]
		copy(q[32*b:32*b+32], blk[2:])
	}
}

// unpackQ8Row rebuilds ggml q8_0 blocks from repacked quants and scales (the
// inverse of repackQ8_0; tests use it to read device tensors back).
func unpackQ8Row(dst, q, s []byte) {
	for b := range len(q) / 32 {
		binary.LittleEndian.PutUint16(dst[b*q8Block:], binary.LittleEndian.Uint16(s[2*b:]))
		copy(dst[b*q8Block+2:(b+1)*q8Block], q[32*b:32*b+32])
	}
}

// rowBytes is the GGUF size of one row of d (its type was checked at load).
func (d dtensor) rowBytes() int {
	rb, _ := gguf.RowBytes(d.typ, int64(d.cols))
	return int(rb)
}

// rowsView is the view of rows [first, first+n) of d as its own tensor.
func (d dtensor) rowsView(name string, first, n int) dtensor {
	v := dtensor{name: name, typ: d.typ, rows: n, cols: d.cols}
	if d.typ == gguf.TypeQ8_0 {
		v.ptr = d.ptr.Add(uint64(first) * uint64(d.cols))
		v.scales = d.scales.Add(uint64(first) * uint64(d.cols/32) * 2)
		return v
	}
	v.ptr = d.ptr.Add(uint64(first) * uint64(d.rowBytes()))
	return v
}

// put writes d's rows to the device, row i from rowOf(i) (GGUF bytes of
// rowBytes each), in d's device layout. Runs of rows that lie back to back in
// host memory go straight from there (the mmap); anything reordered or
// repacked is staged through *stage, which put grows as needed.
func (g *Model) put(d dtensor, rowOf func(int) []byte, rowBytes int, stage *[]byte, progress func(int64)) error {
	chunk := max(1, stageBytes/rowBytes)
	for r0 := 0; r0 < d.rows; r0 += chunk {
		n := min(chunk, d.rows-r0)
		if d.typ != gguf.TypeQ8_0 {
			if run, ok := contiguous(rowOf, r0, n, rowBytes); ok {
				if err := g.e.CopyHtoD(d.ptr.Add(uint64(r0)*uint64(rowBytes)), run); err != nil {
					return err
				}
				progress(int64(len(run)))
				continue
			}
		}
		if cap(*stage) < n*rowBytes {
			*stage = make([]byte, n*rowBytes)
		}
		buf := (*stage)[:n*rowBytes]
		if d.typ != gguf.TypeQ8_0 {
			for i := range n {
				copy(buf[i*rowBytes:], rowOf(r0+i))
			}
			if err := g.e.CopyHtoD(d.ptr.Add(uint64(r0)*uint64(rowBytes)), buf); err != nil {
				return err
			}
			progress(int64(len(buf)))
			continue
		}
		qb, sb := d.cols, d.cols/32*2 // quant and scale bytes per row
		q, s := buf[:n*qb], buf[n*qb:]
		parallelRows(n, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				repackQ8_0(q[i*qb:(i+1)*qb], s[i*sb:(i+1)*sb], rowOf(r0+i))
			}
		})
		if err := g.e.CopyHtoD(d.ptr.Add(uint64(r0)*uint64(qb)), q); err != nil {
			return err
		}
		if err := g.e.CopyHtoD(d.scales.Add(uint64(r0)*uint64(sb)), s); err != nil {
			return err
		}
		progress(int64(len(buf)))
	}
	return nil
}

// contiguous returns rows [r0, r0+n) as one slice when each lies right
// after the one before in one backing array.
func contiguous(rowOf func(int) []byte, r0, n, rowBytes int) ([]byte, bool) {
	first := rowOf(r0)
	if cap(first) < n*rowBytes {
		return nil, false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(first)))
	for i := 1; i < n; i++ {
		if uintptr(unsafe.Pointer(unsafe.SliceData(rowOf(r0+i)))) != base+uintptr(i*rowBytes) {
			return nil, false
		}
	}
	return first[:n*rowBytes], true
}

// parallelRows runs fn over [0, n) split across the CPUs.
func parallelRows(n int, fn func(lo, hi int)) {
	w := min(runtime.GOMAXPROCS(0), max(1, n/64))
	if w == 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for t := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(n*t/w, n*(t+1)/w)
		}()
	}
	wg.Wait()
}

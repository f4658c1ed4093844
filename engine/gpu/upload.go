package gpu

import (
	"encoding/binary"
	"fmt"
	"sync"
	"unsafe"

	"github.com/memra-ai/memra/engine/internal/ktile"
	"github.com/memra-ai/memra/engine/internal/par"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// stageBytes bounds the host staging buffer of an upload that reorders rows
// (row-interleaved pairs, q8_0 repacking, K-quant tiles): big enough to keep the copy engine
// busy, small enough not to double a 1 GB tensor in host memory.
const stageBytes = 16 << 20

// staging is the host buffers of the uploads that reorder rows, reused
// from tensor to tensor: two, so the K-quant tiling of one chunk overlaps
// the copy of the one before (stageTiles).
type staging struct{ b [2][]byte }

// buf is buffer i, at least n bytes long, as n bytes.
func (s *staging) buf(i, n int) []byte {
	if cap(s.b[i]) < n {
		s.b[i] = make([]byte, n)
	}
	return s.b[i][:n]
}

// split is how the device stores a type whose GGUF blocks do not keep 16-byte
// alignment: each block's payload goes to W (back to back, so rows of whole
// blocks stay aligned for the matvec's vector loads) and its one f16 at byte
// side goes to the side array S. q8_0 (34 bytes: d, then 32 quants) is
// split; the K-quants are tiled (tileOf); the other types are stored as
// they are.
type split struct {
	block, values, side int // bytes and values per GGUF block; offset of the f16 moved to S
}

func (l split) payload() int { return l.block - 2 }

// rowBytes returns the W and S bytes of a row of cols values; with lane, S
// in the lane order of the wide q8_0 kernel, its padding included.
func (l split) rowBytes(cols int, lane bool) (w, s int) {
	n := cols / l.values
	if lane {
		_, stride := kernels.Q8LaneLayout(cols)
		return n * l.payload(), stride * 2
	}
	return n * l.payload(), n * 2
}

// splitOf returns t's split layout, if it has one.
func splitOf(t gguf.Type) (split, bool) {
	if t == gguf.TypeQ8_0 {
		return split{block: 34, values: 32, side: 0}, true
	}
	return split{}, false
}

// repack splits GGUF blocks (src, a whole number of them) into payloads (w)
// and side f16s (s).
func (l split) repack(w, s, src []byte) {
	pl := l.payload()
	for b := range len(src) / l.block {
		blk := src[b*l.block : (b+1)*l.block]
		s[2*b], s[2*b+1] = blk[l.side], blk[l.side+1]
		copy(w[b*pl:], blk[:l.side])
		copy(w[b*pl+l.side:(b+1)*pl], blk[l.side+2:])
	}
}

// unpack rebuilds GGUF blocks from payloads and side f16s (the inverse of
// repack; tests use it to read device tensors back).
func (l split) unpack(dst, w, s []byte) {
	pl := l.payload()
	for b := range len(w) / pl {
		blk := dst[b*l.block : (b+1)*l.block]
		copy(blk, w[b*pl:b*pl+l.side])
		binary.LittleEndian.PutUint16(blk[l.side:], binary.LittleEndian.Uint16(s[2*b:]))
		copy(blk[l.side+2:], w[b*pl+l.side:(b+1)*pl])
	}
}

// deviceType is the type the device stores a matrix of type t with rows of
// cols columns in: t, or where t has no kernel for such rows, recodeTo(t),
// whose blocks hold the same values exactly. Q5_0 has no kernel of its own;
// Q4_0's and IQ4_NL's take rows of whole 256-column tiles only. The wider
// type's kernels then give a recoded matrix the sums a file of that type
// would, at 1.55-1.89x the bytes a token.
func deviceType(t gguf.Type, cols int) gguf.Type {
	if tiled(t) && cols%ktile.Cols == 0 {
		return t
	}
	return recodeTo(t)
}

// recodeTo is the type gguf.Recode rewrites a matrix of type t in for the
// device: Q8_0 for Q4_0, Q5_0 and IQ4_NL (t itself for any other).
func recodeTo(t gguf.Type) gguf.Type {
	switch t {
	case gguf.TypeQ4_0, gguf.TypeQ5_0, gguf.TypeIQ4_NL:
		return gguf.TypeQ8_0
	}
	return t
}

// recoded returns rowOf for a matrix of type from whose rows rowOf gives
// in from's GGUF bytes: each row recoded into a new buffer of rb bytes (a
// row in recodeTo(from)). A row that does not recode (not one of from's
// rows, or rb not its size: Load's size checks rule both out) is reported
// to fail, once, and comes back zero. fail may be called from any of the
// upload's workers.
func recoded(from gguf.Type, rb int, rowOf func(int) []byte, fail func(error)) func(int) []byte {
	to := recodeTo(from)
	var once sync.Once
	return func(i int) []byte {
		row := make([]byte, rb)
		if err := gguf.Recode(to, row, from, rowOf(i)); err != nil {
			clear(row)
			once.Do(func() { fail(fmt.Errorf("row %d: %w", i, err)) })
		}
		return row
	}
}

// tileOf returns the tiled layout the device stores t in, if any: the
// K-quants, for the tensor-core matvecs (engine/internal/ktile,
// kernels/matvec_q4k.cu and matvec_q6k.cu). A tiled matrix's views start
// on a tile boundary (rows a multiple of 16).
func tileOf(t gguf.Type) (ktile.Layout, bool) {
	switch t {
	case gguf.TypeQ4_K:
		return ktile.Q4K, true
	case gguf.TypeQ5_K:
		return ktile.Q5K, true
	case gguf.TypeQ6_K:
		return ktile.Q6K, true
	case gguf.TypeQ3_K:
		return ktile.Q3K, true
	case gguf.TypeIQ4_XS:
		return ktile.IQ4XS, true
	case gguf.TypeQ4_0:
		return ktile.Q40, true
	case gguf.TypeIQ4_NL:
		return ktile.IQ4NL, true
	}
	return ktile.Layout{}, false
}

func tiled(t gguf.Type) bool {
	_, ok := tileOf(t)
	return ok
}

// devBytes is the device size of a rows × cols matrix of type t (rb bytes
// per GGUF row): the GGUF size, whole tiles for a tiled type, or for a
// split type with lane-ordered scales (lane) the padded rows.
func devBytes(t gguf.Type, rows, cols, rb int, lane bool) uint64 {
	if l, ok := tileOf(t); ok {
		return uint64(l.Size(rows, cols))
	}
	if l, ok := splitOf(t); ok && lane {
		wb, sb := l.rowBytes(cols, true)
		return uint64(rows) * uint64(wb+sb)
	}
	return uint64(rows) * uint64(rb)
}

// laneScales reports whether a rows × cols matrix of type t, not an
// embedding table, is stored with its scales in lane order: q8_0 matrices
// the wide kernel runs. An embedding table keeps the plain order that
// embed_q8_0 reads, and so takes the plain kernel when tied to the output
// (dtensor.wide).
func laneScales(t gguf.Type, rows, cols int) bool {
	return t == gguf.TypeQ8_0 && MatvecWide(t, rows, cols)
}

// wide reports whether d's products take its family's wide kernel: as
// MatvecWide says, except that a q8_0 matrix stored with plain scales takes
// the plain kernel (the wide one reads lane order).
func (d dtensor) wide() bool {
	return MatvecWide(d.typ, d.rows, d.cols) && (d.typ != gguf.TypeQ8_0 || d.laneScales)
}

// wideKey is d's MatvecVariant.Wide: matvecKey's, or 0 where d.wide says
// the plain kernel.
func (d dtensor) wideKey() int {
	if !d.wide() {
		return 0
	}
	return matvecKey(d.typ, d.rows, d.cols)
}

// rowBytes is the GGUF size of one row of d (its type was checked at load).
func (d dtensor) rowBytes() int {
	rb, _ := gguf.RowBytes(d.typ, int64(d.cols))
	return int(rb)
}

// ggufBytes is d's size in its GGUF file: the bytes a product with d must
// read (the device layout's padding aside).
func (d dtensor) ggufBytes() uint64 { return uint64(d.rows) * uint64(d.rowBytes()) }

// rowsView is the view of rows [first, first+n) of d as its own tensor
// (tiled types: first a multiple of ktile.Rows).
func (d dtensor) rowsView(name string, first, n int) dtensor {
	v := dtensor{name: name, typ: d.typ, rows: n, cols: d.cols}
	if l, ok := tileOf(d.typ); ok {
		v.ptr = d.ptr.Add(uint64(first/ktile.Rows) * uint64(d.cols/ktile.Cols*l.Bytes))
		return v
	}
	if l, ok := splitOf(d.typ); ok {
		wb, sb := l.rowBytes(d.cols, d.laneScales)
		v.ptr = d.ptr.Add(uint64(first) * uint64(wb))
		v.scales = d.scales.Add(uint64(first) * uint64(sb))
		v.laneScales = d.laneScales
		return v
	}
	v.ptr = d.ptr.Add(uint64(first) * uint64(d.rowBytes()))
	return v
}

// put writes d's rows to the device, row i from rowOf(i) (GGUF bytes of
// rowBytes each), in d's device layout. Runs of rows that lie back to back in
// host memory go straight from there (the mmap); anything reordered or
// repacked is staged through *stage, which put grows as needed.
func (g *Model) put(d dtensor, rowOf func(int) []byte, rowBytes int, stage *staging, progress func(int64)) error {
	if l, ok := tileOf(d.typ); ok {
		return g.putTiles(d, l, rowOf, rowBytes, stage, progress)
	}
	l, isSplit := splitOf(d.typ)
	devRow := rowBytes // staged bytes per row
	if isSplit {
		qb, sb := l.rowBytes(d.cols, d.laneScales)
		devRow = qb + sb
	}
	chunk := max(1, stageBytes/devRow)
	for r0 := 0; r0 < d.rows; r0 += chunk {
		n := min(chunk, d.rows-r0)
		if !isSplit {
			if run, ok := contiguous(rowOf, r0, n, rowBytes); ok {
				if err := g.e.CopyHtoD(d.ptr.Add(uint64(r0)*uint64(rowBytes)), run); err != nil {
					return err
				}
				progress(int64(len(run)))
				continue
			}
		}
		if !isSplit {
			buf := stage.buf(0, n*rowBytes)
			for i := range n {
				copy(buf[i*rowBytes:], rowOf(r0+i))
			}
			if err := g.e.CopyHtoD(d.ptr.Add(uint64(r0)*uint64(rowBytes)), buf); err != nil {
				return err
			}
			progress(int64(len(buf)))
			continue
		}
		qb, sb := l.rowBytes(d.cols, d.laneScales) // payload and side bytes per row
		buf := stage.buf(0, n*(qb+sb))
		q, s := buf[:n*qb], buf[n*qb:]
		par.Rows(n, 64, func(lo, hi int) {
			var plain []byte
			if d.laneScales {
				_, psb := l.rowBytes(d.cols, false)
				plain = make([]byte, psb)
			}
			for i := lo; i < hi; i++ {
				if plain == nil {
					l.repack(q[i*qb:(i+1)*qb], s[i*sb:(i+1)*sb], rowOf(r0+i))
					continue
				}
				l.repack(q[i*qb:(i+1)*qb], plain, rowOf(r0+i))
				kernels.Q8LaneOrder(s[i*sb:(i+1)*sb], plain, d.cols)
			}
		})
		if err := g.e.CopyHtoD(d.ptr.Add(uint64(r0)*uint64(qb)), q); err != nil {
			return err
		}
		if err := g.e.CopyHtoD(d.scales.Add(uint64(r0)*uint64(sb)), s); err != nil {
			return err
		}
		progress(int64(n * rowBytes)) // the GGUF bytes: lane order's padding does not travel from the file
	}
	return nil
}

// putTiles is put for a tiled type: whole tiles of 16 rows, staged, the
// last one padded with zero rows.
func (g *Model) putTiles(d dtensor, l ktile.Layout, rowOf func(int) []byte, rowBytes int, stage *staging, progress func(int64)) error {
	return stageTiles(l, d.rows, d.cols, rowOf, rowBytes, stageBytes, stage, func(off uint64, b []byte) error {
		return g.e.CopyHtoD(d.ptr.Add(off), b)
	}, progress)
}

// stageTiles lays rows × cols out in l's tiles a chunk of whole tiles (at
// most limit bytes, at least one tile row) at a time and hands each chunk to
// send with its byte offset in the tiled matrix. The chunks alternate
// between stage's two buffers: while send copies one, the next is tiled (on
// every CPU), so a load pays the larger of the two, not their sum. send must
// be done with its buffer when it returns (a synchronous copy is).
func stageTiles(l ktile.Layout, rows, cols int, rowOf func(int) []byte, rowBytes, limit int, stage *staging,
	send func(off uint64, b []byte) error, progress func(int64)) error {
	tileRow := cols / ktile.Cols * l.Bytes // bytes of 16 rows
	chunk := max(1, limit/tileRow) * ktile.Rows
	// tile lays rows [r0, r0+n) out in stage buffer i.
	tile := func(i, r0, n int) []byte {
		tiles := (n + ktile.Rows - 1) / ktile.Rows
		buf := stage.buf(i, tiles*tileRow)
		clear(buf) // padding rows must be zero, and PutRow writes into a zeroed tile
		par.Rows(tiles, 4, func(lo, hi int) {
			for t := lo; t < hi; t++ {
				for rr := range min(ktile.Rows, n-t*ktile.Rows) {
					l.PutRow(buf[t*tileRow:], rr, rowOf(r0+t*ktile.Rows+rr), cols)
				}
			}
		})
		return buf
	}
	if rows < 1 {
		return nil
	}
	buf := tile(0, 0, min(chunk, rows))
	for k, r0 := 0, 0; r0 < rows; k, r0 = k+1, r0+chunk {
		n := min(chunk, rows-r0)
		var next []byte
		tiled := make(chan struct{})
		if r0+chunk < rows {
			go func() {
				defer close(tiled)
				next = tile((k+1)%2, r0+chunk, min(chunk, rows-r0-chunk))
			}()
		} else {
			close(tiled)
		}
		err := send(uint64(r0/ktile.Rows)*uint64(tileRow), buf)
		<-tiled // even after an error: nothing may still write the buffers once this returns
		if err != nil {
			return err
		}
		progress(int64(n * rowBytes))
		buf = next
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

// recodings counts, per file type, the matrices Load stored as a wider
// type than their file's (deviceType), for Fallbacks.
type recodings []recoding

type recoding struct {
	from      gguf.Type
	first     string // the first such matrix Load uploaded
	n         int
	file, dev uint64 // their bytes in the file and as deviceType's GGUF blocks
}

// note counts t, a matrix Load recodes.
func (r *recodings) note(t *model.Tensor) {
	dev := uint64(t.Rows()) * uint64(devRowBytes(t))
	for i := range *r {
		if c := &(*r)[i]; c.from == t.Type {
			c.n++
			c.file += uint64(len(t.Data))
			c.dev += dev
			return
		}
	}
	*r = append(*r, recoding{from: t.Type, first: t.Name, n: 1, file: uint64(len(t.Data)), dev: dev})
}

// devRowBytes is the GGUF size of a row of t in its device type: whole
// blocks, as deviceType keeps a type's block length (32 or 256 values) and
// model.Load took only rows of whole blocks of t's own type.
func devRowBytes(t *model.Tensor) int {
	dt := deviceType(t.Type, t.Cols())
	return t.Cols() / dt.BlockSize() * dt.BlockBytes()
}

// deviceStepBytes is what model.WeightBytes counts, in each tensor's
// device type: the weight bytes a decode step reads on the device.
func deviceStepBytes(m *model.Model) uint64 {
	var n uint64
	for _, t := range m.Tensors() {
		rows := t.Rows()
		if t == m.TokenEmbd && !m.TiedOutput {
			rows = 1
		}
		n += uint64(rows) * uint64(devRowBytes(t))
	}
	return n
}

// sizeText is n bytes for a message: GB, MB or KB (decimal, as bench
// reports), with three significant digits or so.
func sizeText(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f KB", float64(n)/1e3)
}

package main

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"unsafe"

	"github.com/memra-ai/memra/gguf"
)

// TestPhaseLayout checks what pchain.cu assumes of the host: pc_phase is
// four pointers and four int32 (48 bytes); kind 0 is R 4 rows of cols/256
// = 4 loads per lane and kind 1 R 1 row of 14, kinds 2 and 3 the same in
// q8_0 (cols/512 loads, 2 R C chunks of scales), and 4 and 5 the 9B FFN
// in q8_0, as pchain.cu's pc_unit says; and the units pfreg and pfpre hold
// fit the 16-entry register buffer and their scales PQ_SC floats.
func TestPhaseLayout(t *testing.T) {
	if got := unsafe.Sizeof(phase{}); got != 48 {
		t.Errorf("phase is %d bytes, pc_phase 48", got)
	}
	src, err := os.ReadFile("pchain.cu")
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range units {
		if want.r == 0 {
			continue // kind 6: none (pc_down is a kind's low bit, and 7 is a down kind)
		}
		s, q8 := kindShape(k), k >= kindQ8
		per, sc := 256, 0 // columns a lane's chunk of each row covers per load, over a warp
		if q8 {
			per, sc = 512, 2*want.r*want.c
		}
		if s.cols%per != 0 || s.cols/per != want.c || want.sc != sc {
			t.Errorf("kind %d: cols %d gives %d loads per lane and %d chunks of scales, the table has %d and %d", k, s.cols, s.cols/per, sc, want.c, want.sc)
		}
		held := pfregHeld[k] > 0 // pfreg and pfpre hold its units in registers; pring reads them from the slots
		if s.rows%want.r != 0 || held && (want.r*want.c > 16 || q8 && want.r*want.c > 8) {
			t.Errorf("kind %d: %d rows in units of %d (%d loads)", k, s.rows, want.r, want.r*want.c)
		}
		q := 0
		if q8 {
			q = 1
		}
		m := regexp.MustCompile(`\nPC_UNIT\(` + strconv.Itoa(k) + `, (\d+), (\d+), (\d+), (\d+), (\d+)\)`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("pchain.cu has no PC_UNIT(%d, ...) line of the form this test reads", k)
		}
		if got := fmt.Sprintf("%s %s %s %s %s", m[1], m[2], m[3], m[4], m[5]); got != fmt.Sprintf("%d %d %d %d %d", want.r, want.c, q, want.sc, pfregHeld[k]) {
			t.Errorf("pc_unit<%d> is R C Q8 SC H = %s, the host's %d %d %d %d %d", k, got, want.r, want.c, q, want.sc, pfregHeld[k])
		}
	}
	if !regexp.MustCompile(`#define PQ_SC 8\b`).Match(src) {
		t.Error("PQ_SC is no longer 8: update this test")
	}
	if !regexp.MustCompile(`#define PRG_CAP_SHIFT ` + strconv.Itoa(capShift) + `\n`).Match(src) {
		t.Errorf("pchain.cu's PRG_CAP_SHIFT is not the host's capShift %d", capShift)
	}
	for _, f := range ringForms {
		// pring_hx_brc traps outside 1 to 24 units (3 a warp's ring),
		// pring_hx_brc8 outside 8 (a round) to 24.
		lo := map[string]int{"pring_hx_brc": 1, "pring_hx_brc8": 8}[f.kernel]
		if c := f.flags >> capShift; lo > 0 && (c < lo || c > 24) || lo == 0 && c != 0 {
			t.Errorf("%s: a cap of %d units in flight", f.name, c)
		}
	}
	if !regexp.MustCompile(`#define PQ_X8 ` + strconv.Itoa(flagX8) + `\n`).Match(src) {
		t.Errorf("pchain.cu's PQ_X8 is not the host's flagX8 %d", flagX8)
	}
	// pfpre holds a normed phase's weights as one float4 a thread.
	if shapes[0].cols > 4*256 {
		t.Errorf("gate|up's %d columns are more than one float4 a thread of 256 (pfpre's PR_V norm weights)", shapes[0].cols)
	}
	// The FFN chain: down reads gate|up's SwiGLU outputs (half its rows)
	// and adds into the gate|up input.
	if shapes[1].cols != shapes[0].rows/2 || shapes[1].rows != shapes[0].cols {
		t.Errorf("shapes %v do not chain", shapes)
	}
}

// TestFFNCheck feeds the GPU check its own reference (error ≈ 0) and the
// same outputs off by 1e-3 relative: the first must pass, the second fail,
// so a kernel that rounds its outputs to bf16 (~4e-3) or worse cannot slip
// through. (The bound itself is ~1e-5 of Σ|w·x|, which on these random rows
// is ~10× |w·x|.)
func TestFFNCheck(t *testing.T) {
	for _, q8 := range []bool{false, true} {
		t.Run(map[bool]string{false: "bf16", true: "q8_0"}[q8], func(t *testing.T) { testFFNCheck(t, q8) })
	}
}

func testFFNCheck(t *testing.T, q8 bool) {
	ws := [2]weights{
		{s: shape{16, 256}}, // gate|up: 8 SwiGLU outputs
		{s: shape{256, 32}}, // down (32 columns: one q8_0 block a row)
	}
	for k := range ws {
		if q8 {
			ws[k].quants, ws[k].scales = randomQ8(ws[k].s, uint64(k+1))
		} else {
			ws[k].host = randomBF16(ws[k].s, uint64(k+1))
		}
	}
	x0 := make([]float32, 256)
	nw := make([]float32, 256)
	for i := range x0 {
		x0[i] = float32(i%7) - 3
		nw[i] = 1 + float32(i%3)/4
	}
	f := ffnRef(ws, x0, nw, false)
	// 8 outputs, repeated to the down phase's 32 columns: the chain's
	// shapes need not match here, only the check's arithmetic.
	h := make([]float32, 32)
	for j := range h {
		g := f.g[j%8]
		h[j] = float32(g / (1 + math.Exp(-g)) * f.u[j%8])
	}
	y := make([]float32, 256)
	for i := range y {
		d := float64(x0[i])
		for c := range 32 {
			d += ws[1].at(i, c) * float64(h[c])
		}
		y[i] = float32(d)
	}
	if r := max(f.checkH(h[:8]), f.checkX(&ws[1], x0, h, y)); r > 1 {
		t.Fatalf("exact outputs: %.3g of the bound, want ≤ 1", r)
	}
	hBad := slices.Clone(h[:8])
	for j := range hBad {
		hBad[j] *= 1.001
	}
	if r := f.checkH(hBad); r <= 1 {
		t.Errorf("h off by 1e-3: %.3g of the bound, want > 1", r)
	}
	yBad := slices.Clone(y)
	yBad[100] += 1e-3 * (1 + float32(math.Abs(float64(yBad[100]))))
	if r := f.checkX(&ws[1], x0, h, yBad); r <= 1 {
		t.Errorf("y off by 1e-3: %.3g of the bound, want > 1", r)
	}
}

// TestFFNCheckX8 gives the check outputs computed as PQ_X8's sums are, from
// x' and h rounded to int8 per block of 32 as the kernels round them
// (quant8): they pass. Outputs from x' rounded toward zero instead, or not
// rounded at all, fail: the check holds the kernels to their rounding, not
// to a bound that any int8 would meet.
func TestFFNCheckX8(t *testing.T) {
	ws := [2]weights{{s: shape{16, 256}}, {s: shape{256, 32}}}
	for k := range ws {
		ws[k].quants, ws[k].scales = randomQ8(ws[k].s, uint64(k+5))
	}
	x0, nw := make([]float32, 256), make([]float32, 256)
	for i := range x0 {
		x0[i] = float32(i%11) - 5.3
		nw[i] = 1 + float32(i%3)/4
	}
	f := ffnRef(ws, x0, nw, true)
	// outputs returns h and y from gate|up's input x.
	outputs := func(x []float64) (h, y []float32) {
		h = make([]float32, 32)
		for j := range 8 {
			var g, u float64
			for c := range 256 {
				g += ws[0].at(2*j, c) * x[c]
				u += ws[0].at(2*j+1, c) * x[c]
			}
			h[j] = float32(g / (1 + math.Exp(-g)) * u)
		}
		for j := 8; j < 32; j++ {
			h[j] = h[j%8]
		}
		hq, _, _ := quant8(h)
		y = make([]float32, 256)
		for i := range y {
			d := float64(x0[i])
			for c := range 32 {
				d += ws[1].at(i, c) * hq[c]
			}
			y[i] = float32(d)
		}
		return h, y
	}
	xf := make([]float32, 256)
	for c := range xf {
		xf[c] = float32(f.xn[c])
	}
	xq, xd, _ := quant8(xf)
	h, y := outputs(xq)
	if r := max(f.checkH(h[:8]), f.checkX(&ws[1], x0, h, y)); r > 1 {
		t.Errorf("int8 x rounded as the kernels do: %.3g of the bound, want ≤ 1", r)
	}
	xt := make([]float64, 256)
	for c := range xt {
		d := xd[c/32]
		xt[c] = math.Trunc(float64(xf[c])/d) * d
	}
	h, _ = outputs(xt)
	if r := f.checkH(h[:8]); r <= 1 {
		t.Errorf("int8 x rounded toward zero: %.3g of the bound, want > 1", r)
	}
	h, _ = outputs(f.xn)
	if r := f.checkH(h[:8]); r <= 1 {
		t.Errorf("x not rounded to int8: %.3g of the bound, want > 1", r)
	}
}

// TestStreamRing checks pstream's ring geometries against pchain.cu and the
// shapes: every geometry fits PS_MAX_SLOTS and the dynamic shared memory the
// host asks for, its tiles divide each shape's rows (a phase is whole tiles)
// and are 16-byte copies, and the geometry the sums run on is the one they
// are written for (16-row gate|up tiles, 8-row down tiles).
func TestStreamRing(t *testing.T) {
	src, err := os.ReadFile("pchain.cu")
	if err != nil {
		t.Fatal(err)
	}
	def := func(name string) int {
		m := regexp.MustCompile(`#define ` + name + ` (\d+)`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("pchain.cu defines no %s as a number", name)
		}
		v, _ := strconv.Atoi(string(m[1]))
		return v
	}
	if maxSlots != def("PS_MAX_SLOTS") {
		t.Errorf("maxSlots %d, PS_MAX_SLOTS %d", maxSlots, def("PS_MAX_SLOTS"))
	}
	if !regexp.MustCompile(`geo\.tile_a == 16 && geo\.tile_b == 8`).Match(src) || ringSums != (ring{16, 8, ringSums.slots}) {
		t.Errorf("the sums' geometry: pchain.cu asks for 16/8-row tiles, ringSums is %+v", ringSums)
	}
	for _, g := range ringSweep {
		if g.slots > maxSlots || g.slots*g.slotBytes() > streamRing {
			t.Errorf("%+v: %d slots of %d bytes, over %d slots or %d bytes", g, g.slots, g.slotBytes(), maxSlots, streamRing)
		}
		for k, tr := range []int{g.tileA, g.tileB} {
			if shapes[k].rows%tr != 0 || tr*shapes[k].cols*2%16 != 0 {
				t.Errorf("%+v: %d-row tiles of %v", g, tr, shapes[k])
			}
		}
	}
	// pwarp: 8 warps × PW_SLOTS slots of a down row (PW_SLOT_BYTES).
	if !regexp.MustCompile(`#define PW_SLOT_BYTES \(PC_MAX_COLS \* 2\)`).Match(src) {
		t.Error("PW_SLOT_BYTES is no longer a row of PC_MAX_COLS bf16: update this test")
	}
	if pw := 8 * def("PW_SLOTS") * def("PC_MAX_COLS") * 2; pw > streamRing {
		t.Errorf("pwarp's ring %d exceeds the %d bytes the host asks for", pw, streamRing)
	}
	if shapes[1].cols > def("PC_MAX_COLS") {
		t.Errorf("the down shape's %d columns exceed PC_MAX_COLS %d", shapes[1].cols, def("PC_MAX_COLS"))
	}
}

// TestDeepSlots checks pdeep's slot sizes on the H200's 132 SMs (1,056
// warps), worked by hand: gate|up is 1,792 units of 4 rows × 4 chunks, so a
// warp holds at most 2 (2 × 16 × 32 = 1,024 chunks a lane's 16 bytes, 16 KB
// a warp); down is 1,024 rows of 14 chunks, at most 1 a warp (448, 7 KB).
// The FFN's two phases take 8 × 23 KB = 188,416 bytes a block, and two
// gate|up phases 262,144, more than the 227 KB an H200 block may opt in to.
func TestDeepSlots(t *testing.T) {
	k := deepKernel{blocks: 132, room: 232448 - 14464} // the opt-in limit less pdeep's static shared memory (run196's room)
	ph := func(kinds ...int) []phase {
		var out []phase
		for _, kd := range kinds {
			out = append(out, phase{rows: int32(shapes[kd].rows), cols: int32(shapes[kd].cols), kind: int32(kd)})
		}
		return out
	}
	for _, c := range []struct {
		name   string
		chain  []phase
		want   deepSlots
		shared int
		fits   bool
	}{
		{"ffn", ph(0, 1, 0, 1), deepSlots{1024, 448}, 188416, true},
		{"down", ph(1, 1, 1), deepSlots{448, 448}, 114688, true},
		{"gate|up", ph(0, 0), deepSlots{1024, 1024}, 262144, false},
		{"barrier", []phase{{}, {}}, deepSlots{0, 0}, 0, true},
	} {
		s, ok := k.fit(c.chain)
		if s != c.want || s.shared() != c.shared || ok != c.fits {
			t.Errorf("%s: slots %v (%d bytes, fit %v), want %v (%d, %v)", c.name, s, s.shared(), ok, c.want, c.shared, c.fits)
		}
	}
	// pfreg holds 2 gate|up units and 1 down row a warp: the FFN on 132 SMs
	// fits; on 64 (512 warps: 4 gate|up units, 2 down rows each) it does not.
	k.held = pfregHeld
	if _, ok := k.fit(ph(0, 1)); !ok {
		t.Error("pfreg: the FFN on 132 SMs does not fit")
	}
	k.blocks = 64
	if _, ok := k.fit(ph(0, 1)); ok {
		t.Error("pfreg: the FFN on 64 SMs fits, want 4 gate|up units a warp refused")
	}
	// q8_0 on 132 SMs: a gate|up unit is 4 × 2 × 32 chunks of quants and
	// 16 of scales (272), at most 2 a warp (544); a down row 7 × 32 + 14
	// (238). 8 × (544 + 238) × 16 = 100,096 bytes a block. A kernel takes
	// only its own weight type's chains.
	k.blocks = 132
	q := deepKernel{blocks: 132, room: k.room, held: pfregHeld, q8: true}
	ffnQ8 := []phase{{rows: 7168, cols: 1024, kind: 2}, {rows: 1024, cols: 3584, kind: 3}}
	if s, ok := q.fit(ffnQ8); s != (deepSlots{544, 238}) || s.shared() != 100096 || !ok {
		t.Errorf("q8_0 FFN: slots %v (%d bytes, fit %v), want [544 238] (100096, true)", s, s.shared(), ok)
	}
	if _, ok := q.fit(ph(0, 1)); ok {
		t.Error("a q8_0 kernel fits a bf16 chain")
	}
	if _, ok := k.fit(ffnQ8); ok {
		t.Error("a bf16 kernel fits a q8_0 chain")
	}
}

// TestQ8Weights checks the q8_0 matrices pchain.cu reads: the quants row
// by row, then the scales, each element its block's scale times its quant,
// no quant outside [-127, 127] and no scale zero.
func TestQ8Weights(t *testing.T) {
	w := weights{s: shape{4, 64}}
	w.quants, w.scales = randomQ8(w.s, 3)
	b := w.device()
	if len(b) != 4*64+2*4*2 {
		t.Fatalf("%d bytes, want 272", len(b))
	}
	for i, q := range w.quants {
		if int8(b[i]) != q || q < -127 {
			t.Fatalf("quant %d: byte %d, quant %d", i, int8(b[i]), q)
		}
	}
	for j, sc := range w.scales {
		if got := uint16(b[256+2*j]) | uint16(b[257+2*j])<<8; got != sc || sc&0x7fff == 0 {
			t.Fatalf("scale %d: bytes %#04x, scale %#04x", j, got, sc)
		}
	}
	if got, want := w.at(3, 40), float64(gguf.F16ToF32(w.scales[3*2+1]))*float64(w.quants[3*64+40]); got != want {
		t.Errorf("at(3, 40) = %g, want %g", got, want)
	}
}

// TestRingSlots checks pring's geometry, worked by hand: its slot is a 9B
// down row, 24 chunks a lane (768) and 48 of scales (816 chunks, 13,056
// bytes); two slots for each of 8 warps take 208,896 bytes, which fit the
// H200's 232,448 a block less pring's 14,464 static (ptxas, run209); and
// PRG_MAX_SLOTS and PRG_DF_STRIDE are the host's maxRingSlots and dfStride.
func TestRingSlots(t *testing.T) {
	if ringSlot != 816 {
		t.Errorf("ringSlot %d chunks, want 816", ringSlot)
	}
	if got := 8 * 2 * ringSlot * 16; got != 208896 || got > 232448-14464 {
		t.Errorf("two slots a warp: %d bytes a block", got)
	}
	src, err := os.ReadFile("pchain.cu")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`#define PRG_MAX_SLOTS ` + strconv.Itoa(maxRingSlots) + `\n`).Match(src) {
		t.Errorf("pchain.cu's PRG_MAX_SLOTS is not the host's maxRingSlots %d", maxRingSlots)
	}
	if !regexp.MustCompile(`#define PRG_DF_STRIDE ` + strconv.Itoa(dfStride) + `\n`).Match(src) {
		t.Errorf("pchain.cu's PRG_DF_STRIDE is not the host's dfStride %d", dfStride)
	}
	// pring_hq: h's 384 groups of 32 over 132 blocks are 2 or 3 a block, within
	// the 4 (32 float4s) prg_quant_h's warp takes.
	if g := nineShapes[1].cols / 32; (g+131)/132 > 4 || nineShapes[1].cols%32 != 0 {
		t.Errorf("%d columns of h: not whole groups of 32, or more than 4 groups a block on 132 SMs", nineShapes[1].cols)
	}
	// Every 9B matrix is whole units and a multiple of 128 columns
	// (prg_stage's whole warps).
	for k, s := range nineShapes {
		if s.rows%units[kind9B+k].r != 0 || s.cols%128 != 0 || s.cols > 12288 {
			t.Errorf("%v: not whole units of %d rows, or columns prg_stage cannot take", s, units[kind9B+k].r)
		}
	}
}

// TestWalkOrder checks PRG_PERM's layout: pchain.cu's prg_wrow and
// grouped prg_unit are the formulas walkOrder mirrors; walkOrder is a
// permutation in which each step of the grid's warps takes consecutive
// places (the 9B shapes on 132 blocks, and a grid that does not divide
// the groups); and walkRows stores each unit's rows and scales at its
// place.
func TestWalkOrder(t *testing.T) {
	src, err := os.ReadFile("pchain.cu")
	if err != nil {
		t.Fatal(err)
	}
	for _, re := range []string{
		`return 8 \* \(k < 4 \* lo \? k \* grid \+ b : 4 \* lo \* grid \+ \(k - 4 \* lo\) \* extra \+ b\) \+ w;`,
		`return G \? 32 \* \(\(int\)blockIdx\.x \+ \(k >> 2\) \* \(int\)gridDim\.x\) \+ w\.base \+ 8 \* \(k & 3\)`,
		`lo = groups / \(int\)gridDim\.x, extra = groups - lo \* \(int\)gridDim\.x;`,
		`if \(G\) return \{4 \* prg_groups\(units / 32\), w, 0\};`,
	} {
		if !regexp.MustCompile(re).Match(src) {
			t.Fatalf("pchain.cu no longer has %s, which walkOrder mirrors", re)
		}
	}
	for _, c := range []struct{ g, grid int }{{384, 132}, {128, 132}, {7, 3}} {
		at := walkOrder(c.g, c.grid)
		seen := make([]bool, len(at))
		for _, u := range at {
			if u < 0 || u >= len(at) || seen[u] {
				t.Fatalf("%d groups over %d blocks: unit %d placed twice or out of range", c.g, c.grid, u)
			}
			seen[u] = true
		}
	}
	// Step k = 0 of 132 blocks over 128 groups: places 0 to 1,023 are
	// block b's warp w's first unit, 32 b + w.
	if at := walkOrder(128, 132); at[8*5+3] != 32*5+3 || at[8*127+7] != 32*127+7 || at[8*128] != 32*0+8 {
		t.Errorf("walkOrder(128, 132) starts %v", at[:10])
	}
	// 384 groups over 132 blocks (2 each, 120 with a third): step 1 of
	// block 5's warp 3 follows all 132 blocks' step 0, and step 8 (its third
	// group's first) follows all 132 blocks' 8 steps, among 120 blocks.
	if at := walkOrder(384, 132); at[8*(132+5)+3] != 32*5+3+8 || at[8*(8*132+5)+3] != 32*(5+2*132)+3 {
		t.Errorf("walkOrder(384, 132): step 1 of block 5's warp 3 holds %d, step 8 %d", at[8*(132+5)+3], at[8*(8*132+5)+3])
	}
	w := weights{s: shape{2 * 32 * 3, 64}}
	w.quants, w.scales = randomQ8(w.s, 3)
	b := walkRows(&w, 2, 2)
	at, n := walkOrder(3, 2), w.s.rows*w.s.cols
	sc := unsafe.Slice((*uint16)(unsafe.Pointer(&b[n])), n/32)
	for place, u := range at {
		for i := range 2 * w.s.cols {
			row, c := 2*u+i/w.s.cols, i%w.s.cols
			if int8(b[place*2*w.s.cols+i]) != w.quants[row*w.s.cols+c] || sc[place*4+i/32] != w.scales[row*2+c/32] {
				t.Fatalf("unit %d: not at place %d", u, place)
			}
		}
	}
}

// TestCheckXQ checks that checkXQ passes x in int8 as the kernel rounds it
// and fails one quantum off, a wrong scale or a wrong sum of squares.
func TestCheckXQ(t *testing.T) {
	n := 128
	x, nw := make([]float32, n), make([]float32, n)
	for c := range x {
		x[c] = float32(c%13) - 6.2
		nw[c] = 0.5 + float32(c%5)/8
	}
	xf := make([]float32, n)
	for c := range xf {
		xf[c] = x[c] * nw[c]
	}
	xq, xd, _ := quant8(xf)
	tail := make([]byte, n+8*(n/32))
	d := unsafe.Slice((*float32)(unsafe.Pointer(&tail[n])), n/32)
	ss := unsafe.Slice((*float32)(unsafe.Pointer(&tail[n+4*(n/32)])), n/32)
	for g := range n / 32 {
		d[g] = float32(xd[g])
		var s float32
		for c := 32 * g; c < 32*g+32; c++ {
			tail[c] = byte(int8(math.Round(xq[c] / xd[g])))
			s += x[c] * x[c]
		}
		ss[g] = s
	}
	if err := checkXQ(x, nw, tail); err != nil {
		t.Fatalf("x rounded as the kernel rounds it: %v", err)
	}
	for _, bad := range []struct {
		name string
		set  func(b []byte)
	}{
		{"one quantum off", func(b []byte) { b[37]++ }},
		{"a scale", func(b []byte) {
			unsafe.Slice((*float32)(unsafe.Pointer(&b[n])), n/32)[2] *= 1.0001
		}},
		{"a sum of squares", func(b []byte) {
			unsafe.Slice((*float32)(unsafe.Pointer(&b[n+4*(n/32)])), n/32)[3] *= 1.00001
		}},
		{"a sum of squares never stored (NaN)", func(b []byte) {
			unsafe.Slice((*float32)(unsafe.Pointer(&b[n+4*(n/32)])), n/32)[1] = float32(math.NaN())
		}},
	} {
		b := slices.Clone(tail)
		bad.set(b)
		if checkXQ(x, nw, b) == nil {
			t.Errorf("%s: checkXQ passed", bad.name)
		}
	}
}

// TestByteRing plays pring_hx_br's placement over the 9B chain's walks on
// 132 blocks, the consumer taking each unit as late as the ring allows: no
// two live units overlap, none runs past the ring, at most PRG_BR_UNITS
// are live (unit c reuses barrier c mod 3 only once unit c - 3 is taken),
// and a ring of gate|up units holds 3 of them. pring_hx_brl's layer chain
// (gate|up, down, output projection) is played the same way with its bound
// of PRG_BR_UNITS units in flight, and without it must fail: 6 of the
// projection's units fit the ring's bytes. It mirrors pchain.cu's
// prg_br_at and prg_fill_br's footprints in Go, tied to them only through
// PRG_BR_UNITS and the units' strides: a change to those rules in the CUDA
// must be made here too (the GPU's bit checks test the kernel itself).
func TestByteRing(t *testing.T) {
	const brUnits = 3
	src, err := os.ReadFile("pchain.cu")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`#define PRG_BR_UNITS ` + strconv.Itoa(brUnits) + `\n`).Match(src) {
		t.Errorf("pchain.cu's PRG_BR_UNITS is not %d", brUnits)
	}
	rb := 2 * ringSlot
	gu, dn := stride(kind9B), stride(kind9B+1)
	if 3*gu != rb || 2*dn != rb {
		t.Fatalf("a ring of %d chunks: gate|up units of %d, down units of %d", rb, gu, dn)
	}
	at := func(head, sz int) int {
		if head+sz > rb {
			return 0
		}
		return head
	}
	// play places block b's units of 8 phases of kinds (in turn), bounded
	// to brUnits in flight when bound, and returns the most live at once.
	play := func(b int, kinds []int32, bound bool) (int, error) {
		type live struct{ c, at, sz, fp int }
		var q []live // issued, not yet taken, oldest first
		head, occ, most := 0, 0, 0
		c := 0
		for p := range 8 {
			k := kinds[p%len(kinds)]
			sz := stride(k)
			groups := kindShape(int(k)).rows / units[k].r / 32
			n := 0
			if groups > b {
				n = 4 * ((groups - b + 131) / 132)
			}
			for range n {
				a := at(head, sz)
				need := sz
				if a == 0 && head != 0 {
					need = rb - head + sz
				}
				for occ+need > rb || bound && len(q) == brUnits {
					occ -= q[0].fp
					q = q[1:]
				}
				for _, l := range q {
					if a < l.at+l.sz && l.at < a+sz {
						return most, fmt.Errorf("unit %d at %d overlaps unit %d at %d", c, a, l.c, l.at)
					}
					if l.c%brUnits == c%brUnits {
						return most, fmt.Errorf("unit %d reuses unit %d's barriers while it is live", c, l.c)
					}
				}
				if a+sz > rb {
					return most, fmt.Errorf("unit %d runs past the ring", c)
				}
				q = append(q, live{c, a, sz, need})
				occ += need
				most = max(most, len(q))
				head = a + sz
				if head == rb {
					head = 0
				}
				c++
			}
		}
		return most, nil
	}
	ffn, layer := []int32{kind9B, kind9B + 1}, []int32{kind9B, kind9B + 1, kindOut}
	for b := range 132 {
		most, err := play(b, ffn, false)
		if err != nil {
			t.Fatalf("FFN chain, block %d: %v", b, err)
		}
		if b == 0 && most != brUnits {
			t.Errorf("block 0: at most %d units live, want %d", most, brUnits)
		}
		if _, err := play(b, layer, true); err != nil {
			t.Fatalf("layer chain, block %d: %v", b, err)
		}
	}
	if _, err := play(0, layer, false); err == nil {
		t.Error("layer chain without the bound of units in flight: no barrier reused, but 6 projection units fit the ring's bytes")
	}
}

package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"unsafe"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/internal/evtime"
	"github.com/memra-ai/memra/engine/internal/xcmd"
)

// nineShapes is the 9B preset's FFN (pchain.cu's kinds 4 and 5, q8_0):
// gate|up 24576 × 4096 with the pre-norm and the SwiGLU, down 4096 × 12288
// into the residual.
var nineShapes = [2]shape{{24576, 4096}, {4096, 12288}}

// kind9B is pc_phase.kind of the 9B gate|up phase; its down phase is the
// next kind.
const kind9B = 4

// ringSlot is pring's slot: the larger unit of kinds 4 and 5, in 16-byte
// chunks (a down row of 24 chunks a lane and its 48 of scales).
var ringSlot = max(stride(kind9B), stride(kind9B+1))

// ringForm is one kernel -nine checks and times (with its producer warps):
// pring, pring_hq (h
// quantised once, by the blocks that write it), pring_hx (x' too, before
// its norm's 1/rms: step 88), and pring_hx on matrices stored in the order
// the grid takes their units (PRG_PERM), and pring_hx with its producer
// held from a phase's sums' end to the next phase's x staged (PRG_HOLD),
// pring_hx2, pring_hx with two producer warps, pring_hx_s2, pring_hx
// built for 2 slots a warp; pring_hx_ff, pring_hx with a producer that
// fills whichever warp's slot is free first, pring_hx_er, pring_hx whose
// consumers free a slot once its unit is in their registers, and
// pring_hx_ffer, both; pring_hx_bulk, pring_hx with each unit copied by
// two bulk copies from one lane, and pring_hx_bulker, that and
// pring_hx_er's consumers, pring_hx_erp, pring_hx_er with each warp's
// next phase's first unit taken into registers in the grid barrier's
// wait, pring_hx_df, pring_hx_er with a flag a block for the grid barrier
// and the next phase's x' staged writer by writer, and pring_hx_l2 and
// pring_hx_l4, pring_hx_er whose producer prefetches each warp's units 2
// or 4 ahead into the L2 (step 89); pring_hx_fr, pring_hx_er with
// pring_hx_ff's order from a producer whose cursors are registers (step
// 90), and pring_hx_br, pring_hx_er with each warp's 2 slots as one ring
// of bytes, 3 gate|up units or 2 down rows (step 90; S = 2 only), and
// pring_hx_brs, pring_hx_br with x' staged by bulk copies, and
// pring_hx_brp, pring_hx_br for programmatic dependent launch, and
// pring_hx_brl, pring_hx_br taking output projections too (step 91; here
// on the FFN chain, and in runLayer on a layer's), and pring_hx_brc,
// pring_hx_br whose producer keeps at most a cap of a block's units in
// flight (step 91: /cN, N units), testing it a unit, and pring_hx_brc8,
// a round of 8 units, and pring_hx_brr, pring_hx_br with a down phase's
// residuals loaded at its start. x' is int8 in all of them.
type ringForm struct {
	name, kernel string
	flags        int
	producers    int
	slots        int  // the ring depth the kernel is built for; 0: any
	done         bool // a flag a block for its finished phases (dfStride words), zeroed before each launch
}

// dfStride is pchain.cu's PRG_DF_STRIDE: words from one block's flag to the next's.
const dfStride = 32

// pdlBars is how many barrier counters one timing of pring_hx_brp's
// launches takes, one a launch (evtime.PerCall's 3 + 5 × 10 launches).
const pdlBars = 64

// depth is the ring depth the form runs at when d is asked for.
func (r ringForm) depth(d int) int {
	if r.slots != 0 {
		return r.slots
	}
	return d
}

var ringForms = []ringForm{
	{"pring/x8", "pring", 0, 1, 0, false},
	{"pring_hq/x8", "pring_hq", 0, 1, 0, false},
	{"pring_hx/x8", "pring_hx", 0, 1, 0, false},
	{"pring_hx/x8/perm", "pring_hx", flagPerm, 1, 0, false},
	{"pring_hx/x8/hold", "pring_hx", flagHold, 1, 0, false},
	{"pring_hx2/x8", "pring_hx2", 0, 2, 0, false},
	{"pring_hx_s2/x8", "pring_hx_s2", 0, 1, 2, false},
	{"pring_hx_ff/x8", "pring_hx_ff", 0, 1, 0, false},
	{"pring_hx_er/x8", "pring_hx_er", 0, 1, 0, false},
	{"pring_hx_ffer/x8", "pring_hx_ffer", 0, 1, 0, false},
	{"pring_hx_bulk/x8", "pring_hx_bulk", 0, 1, 0, false},
	{"pring_hx_bulker/x8", "pring_hx_bulker", 0, 1, 0, false},
	{"pring_hx_erp/x8", "pring_hx_erp", 0, 1, 0, false},
	{"pring_hx_df/x8", "pring_hx_df", 0, 1, 0, true},
	{"pring_hx_l2/x8", "pring_hx_l2", 0, 1, 0, false},
	{"pring_hx_l4/x8", "pring_hx_l4", 0, 1, 0, false},
	{"pring_hx_fr/x8", "pring_hx_fr", 0, 1, 0, false},
	{"pring_hx_br/x8", "pring_hx_br", 0, 1, 2, false},
	{"pring_hx_brs/x8", "pring_hx_brs", 0, 1, 2, false},
	{"pring_hx_brp/x8", "pring_hx_brp", 0, 1, 2, false},
	{"pring_hx_brl/x8", "pring_hx_brl", 0, 1, 2, false},
	{"pring_hx_brc/x8/c6", "pring_hx_brc", 6 << capShift, 1, 2, false},
	{"pring_hx_brc/x8/c9", "pring_hx_brc", 9 << capShift, 1, 2, false},
	{"pring_hx_brc/x8/c12", "pring_hx_brc", 12 << capShift, 1, 2, false},
	{"pring_hx_brc/x8/c16", "pring_hx_brc", 16 << capShift, 1, 2, false},
	{"pring_hx_brc/x8/c24", "pring_hx_brc", 24 << capShift, 1, 2, false},
	{"pring_hx_brc8/x8/c8", "pring_hx_brc8", 8 << capShift, 1, 2, false},
	{"pring_hx_brc8/x8/c12", "pring_hx_brc8", 12 << capShift, 1, 2, false},
	{"pring_hx_brc8/x8/c16", "pring_hx_brc8", 16 << capShift, 1, 2, false},
	{"pring_hx_brc8/x8/c24", "pring_hx_brc8", 24 << capShift, 1, 2, false},
	{"pring_hx_brr/x8", "pring_hx_brr", 0, 1, 2, false},
}

// capShift is pchain.cu's PRG_CAP_SHIFT: pring_hx_brc's cap of a block's
// units in flight, in its flags.
const capShift = 16

// pchain.cu's PRG_PERM, PRG_NO_EPI and PRG_NO_QSTORE (pring_hx without
// its epilogue, or without the epilogue's stores: timing only), PRG_HOLD.
const (
	flagPerm     = 64
	flagNoEpi    = 128
	flagNoQStore = 256
	flagHold     = 512
)

// hx reports whether the form is pring_hx's (x' quantised before the 1/rms).
func (r ringForm) hx() bool { return strings.HasPrefix(r.kernel, "pring_hx") }

// walkOrder is PRG_PERM's order of a grouped phase's units, g groups of 32
// over grid blocks of 8 warps: the unit stored at each place. pchain.cu's
// prg_wrow places warp w's k-th unit of block b, which prg_unit's grouped
// walk makes unit 32 (b + ⌊k/4⌋ grid) + w + 8 (k mod 4).
func walkOrder(g, grid int) []int {
	at := make([]int, 32*g)
	lo, extra := g/grid, g%grid
	for b := range grid {
		groups := lo
		if b < extra {
			groups++
		}
		for w := range 8 {
			for k := range 4 * groups {
				pos := k*grid + b
				if k >= 4*lo {
					pos = 4*lo*grid + (k-4*lo)*extra + b
				}
				at[8*pos+w] = 32*(b+k/4*grid) + w + 8*(k%4)
			}
		}
	}
	return at
}

// walkRows is w's q8_0 matrix with its units of r rows stored in
// walkOrder for grid blocks, quants then scales as device() has them.
func walkRows(w *weights, r, grid int) []byte {
	s := w.s
	at := walkOrder(s.rows/r/32, grid)
	q := make([]byte, 0, s.rows*s.cols)
	var sc []uint16
	for _, u := range at {
		q = append(q, cuda.AsBytes(w.quants[u*r*s.cols:(u+1)*r*s.cols])...)
		sc = append(sc, w.scales[u*r*s.cols/32:(u+1)*r*s.cols/32]...)
	}
	return append(q, cuda.AsBytes(sc)...)
}

// runNine checks pring's forms on the 9B q8_0 FFN (the first FFN against
// float64; pring_hx's x in int8 as its down phase stores it, and the next
// gate|up phase from it; 7 phases with one slot a warp against two, bit
// for bit, pring against pring_hq and pring_hx against itself on the
// matrices in the grid's order) and times them on a chain of n phases with each ring depth in
// depths, whole and with the staging or the sums left out; then on the
// same chain with no rows. With only set, it launches that form once on
// 2 phases (run's, so that x and h hold numbers) and 3 times on the chain
// at the last depth instead, and checks and times nothing (for ncu, whose
// --launch-skip 2 then takes the second whole chain).
func runNine(cubin string, n int, depths []int, only string) error {
	if n < 7 {
		return fmt.Errorf("-phases %d: need at least 7 (the bit-for-bit checks run 7)", n)
	}
	e, mod, _, err := xcmd.Kernel(cubin, "pring")
	if err != nil {
		return err
	}
	defer e.Close()
	ks := map[string]deepKernel{}
	for _, f := range ringForms {
		if _, ok := ks[f.kernel]; ok {
			continue
		}
		if ks[f.kernel], err = loadDeep(e, mod, f.kernel, f.producers); err != nil {
			return err
		}
	}
	// The traced kernels (clock64 stamps of each phase), one producer each;
	// and runLayer's pring_hx_brlp, pring_hx_brlr and the mixer forms
	// pring_hx_brm, _brm4, _brm4s and _brm4n (no ringForms: they run only on
	// a layer's chain or tail).
	for _, name := range []string{"pring_hx_trace", "pring_hx_er_trace", "pring_hx_br_trace", "pring_hx_brs_trace", "pring_hx_brl_trace", "pring_hx_brc_trace", "pring_hx_brc8_trace",
		"pring_hx_brlp", "pring_hx_brlr", "pring_hx_brlr_trace", "pring_hx_brm", "pring_hx_brm_trace", "pring_hx_brm4", "pring_hx_brm4_trace",
		"pring_hx_brm4s", "pring_hx_brm4s_trace", "pring_hx_brm4n", "pring_hx_brm4n_trace"} {
		if ks[name], err = loadDeep(e, mod, name, 1); err != nil {
			return err
		}
	}
	k, tk, tkER := ks["pring"], ks["pring_hx_trace"], ks["pring_hx_er_trace"]
	shared := func(depth int) int { return 8 * depth * ringSlot * 16 }
	for _, d := range depths {
		for name, kk := range ks {
			if d < 1 || d > maxRingSlots || shared(d) > kk.room {
				return fmt.Errorf("%s: %d slots a warp take %d bytes a block (%d fit, at most %d slots)", name, d, shared(d), kk.room, maxRingSlots)
			}
		}
	}
	fmt.Printf("pring: %d SMs, slots of %d bytes, %d bytes of dynamic shared memory a block fit\n", e.Info().SMs, ringSlot*16, k.room)

	mem := newDevMem(e)
	defer mem.free()
	var w [2]weights
	for i, s := range nineShapes {
		w[i] = weights{s: s}
		w[i].quants, w[i].scales = randomQ8(s, uint64(i+11))
		p, err := mem.upload(w[i].device()) // 107 and 53 MB: past the L2 together
		if err != nil {
			return err
		}
		w[i].copies = []cuda.DevPtr{p}
	}
	// The same matrices in the grid's order, for PRG_PERM.
	var dperm [2]cuda.DevPtr
	for i := range w {
		if dperm[i], err = mem.upload(walkRows(&w[i], units[kind9B+i].r, k.blocks)); err != nil {
			return err
		}
	}
	r := rand.New(rand.NewPCG(9, 9))
	nx, nh := nineShapes[0].cols, nineShapes[1].cols
	x0, nw := make([]float32, nx), make([]float32, nx)
	for i := range x0 {
		x0[i] = float32(r.NormFloat64())
		nw[i] = float32(0.5 + r.Float64())
	}
	dnw, err := mem.upload(cuda.AsBytes(nw))
	if err != nil {
		return err
	}
	for _, c := range []struct {
		what      string
		n, blocks int
	}{{"h", nh, k.blocks}, {"x", nx, k.blocks}} {
		if groups := c.n / 32; groups > 4*c.blocks || c.n%128 != 0 {
			return fmt.Errorf("pring: %d columns of %s: not whole float4s of groups of 32, or %d groups over %d blocks, more than the 4 a block quantises",
				c.n, c.what, groups, c.blocks)
		}
	}
	// x and h, each followed by its int8, one f32 scale a 32 and (x, for
	// pring_hx) one f32 sum of squares a 32; NaNs over all of the tails
	// before each checked launch: a group left unquantised reads NaN.
	xTail, hNaN := nanTail(nx), nanH(nh)
	dx, err := mem.alloc(uint64(4*nx + 4*len(xTail)))
	if err != nil {
		return err
	}
	dh, err := mem.alloc(uint64(4 * len(hNaN)))
	if err != nil {
		return err
	}
	dbar, dph, err := mem.chain(n)
	if err != nil {
		return err
	}
	dphPerm, err := mem.alloc(uint64(n) * uint64(unsafe.Sizeof(phase{})))
	if err != nil {
		return err
	}
	// pring_hx_df's flags: its threads below the grid wait a block each.
	if k.blocks > 256 {
		return fmt.Errorf("pring_hx_df: %d blocks, more than its 256 consumer threads can wait for", k.blocks)
	}
	// One FFN a launch on counters zeroed once for a whole timing (no memset
	// between two launches to break their programmatic dependence): launch
	// i's barrier counter is the i-th, one 128-byte line apart, and a timing
	// refuses a launch past pdlBars.
	dbars, err := mem.alloc(uint64(4 * dfStride * pdlBars))
	if err != nil {
		return err
	}
	ddone, err := mem.alloc(uint64(4 * dfStride * k.blocks))
	if err != nil {
		return err
	}
	ph := make([]phase, n)
	for i := range ph {
		if i%2 == 0 {
			ph[i] = phase{w: uint64(w[0].copies[0]), x: uint64(dx), y: uint64(dh), norm: uint64(dnw), mode: modeSwiGLU}
		} else {
			ph[i] = phase{w: uint64(w[1].copies[0]), x: uint64(dh), y: uint64(dx), mode: modeAdd}
		}
		s := nineShapes[i%2]
		ph[i].rows, ph[i].cols, ph[i].kind = int32(s.rows), int32(s.cols), int32(kind9B+i%2)
	}
	phPerm := slices.Clone(ph)
	for i := range phPerm {
		phPerm[i].w = uint64(dperm[i%2])
	}
	upload := func(dst cuda.DevPtr, p []phase) error {
		return e.CopyHtoD(dst, unsafe.Slice((*byte)(unsafe.Pointer(&p[0])), len(p)*int(unsafe.Sizeof(phase{}))))
	}
	if err := upload(dph, ph); err != nil {
		return err
	}
	if err := upload(dphPerm, phPerm); err != nil {
		return err
	}
	launch := func(f ringForm, phases, depth, flags int) error {
		if f.depth(depth) != depth {
			return fmt.Errorf("%s: built for %d slots a warp, launched with %d", f.name, f.slots, depth)
		}
		d := dph
		if f.flags&flagPerm != 0 {
			d = dphPerm
		}
		if f.done {
			if err := e.MemsetD32Async(ddone, 0, uint64(dfStride*k.blocks)); err != nil {
				return err
			}
			return launchChain(e, ks[f.kernel].fn, k.blocks, ks[f.kernel].threads(), shared(depth), d, phases, dbar, f.flags|flags, int32(depth), int32(ringSlot), ddone)
		}
		return launchChain(e, ks[f.kernel].fn, k.blocks, ks[f.kernel].threads(), shared(depth), d, phases, dbar, f.flags|flags, int32(depth), int32(ringSlot))
	}
	// run launches the first `phases` phases from x0 with NaNs in h and in
	// x's tail and returns h, x, x's tail, and all of h's and x's buffers
	// (their floats and tails) as bytes; runWith is run with its launches
	// made by launch.
	runWith := func(launch func() error) (h, y []float32, tail, all []byte, err error) {
		if err := e.CopyHtoD(dx, cuda.AsBytes(slices.Concat(x0, xTail))); err != nil {
			return nil, nil, nil, nil, err
		}
		if err := e.CopyHtoD(dh, cuda.AsBytes(hNaN)); err != nil {
			return nil, nil, nil, nil, err
		}
		if err := launch(); err != nil {
			return nil, nil, nil, nil, err
		}
		ha, ya := make([]float32, len(hNaN)), make([]float32, nx+len(xTail))
		if err := e.CopyDtoH(cuda.AsBytes(ha), dh); err != nil {
			return nil, nil, nil, nil, err
		}
		if err := e.CopyDtoH(cuda.AsBytes(ya), dx); err != nil {
			return nil, nil, nil, nil, err
		}
		return ha[:nh], ya[:nx], cuda.AsBytes(ya[nx:]), slices.Concat(cuda.AsBytes(ha), cuda.AsBytes(ya)), nil
	}
	run := func(f ringForm, phases, depth int) (h, y []float32, tail, all []byte, err error) {
		return runWith(func() error { return launch(f, phases, depth, 0) })
	}

	if only != "" {
		i := slices.IndexFunc(ringForms, func(f ringForm) bool { return f.name == only })
		if i < 0 {
			var names []string
			for _, f := range ringForms {
				names = append(names, f.name)
			}
			return fmt.Errorf("-ncu %q: not a form -nine runs (%s)", only, strings.Join(names, ", "))
		}
		if _, _, _, _, err := run(ringForms[i], 2, ringForms[i].depth(depths[len(depths)-1])); err != nil { // x and h hold numbers
			return err
		}
		for range 3 {
			if err := launch(ringForms[i], n, ringForms[i].depth(depths[len(depths)-1]), 0); err != nil {
				return err
			}
		}
		return e.Synchronize()
	}
	want, wantHX := ffnRef(w, x0, nw, true), ffnRefHX(w, x0, nw)
	for _, f := range ringForms {
		ref := want
		if f.hx() {
			ref = wantHX
		}
		h, y, _, _, err := run(f, 2, f.depth(depths[0]))
		if err != nil {
			return err
		}
		worst := max(ref.checkH(h), ref.checkX(&w[1], x0, h, y))
		if worst > 1 {
			return fmt.Errorf("%s: 9B q8_0 FFN error %.2f times its bound", f.name, worst)
		}
		fmt.Printf("check %s: 9B q8_0 FFN max error %.3g of its bound (ok)\n", f.name, worst)
		if !f.hx() {
			continue
		}
		// The down phase's x in int8 for the next gate|up phase, and that
		// phase's h from it.
		h3, y3, tail, _, err := run(f, 3, f.depth(depths[0]))
		if err != nil {
			return err
		}
		if !slices.Equal(bitsOf(y3), bitsOf(y)) {
			return fmt.Errorf("%s: x after 3 phases differs from x after 2", f.name)
		}
		if err := checkXQ(y, nw, tail); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		if worst := ffnRefHX(w, y, nw).checkH(h3); worst > 1 {
			return fmt.Errorf("%s: the second gate|up phase, from x in int8 as the down phase stored it: error %.2f times its bound", f.name, worst)
		}
		fmt.Printf("check %s: x in int8 as the down phase stores it, and the next gate|up phase from it (ok)\n", f.name)
	}
	// 7 phases: 2 slots a warp against 1, bit for bit; pring_hq against
	// pring (the same products and the same rounding of h, by other warps:
	// h's and x's floats, as pring writes no int8 copies); pring_hx on the
	// matrices in the grid's order, with its producer held, with two
	// producers, built for 2 slots, filling the first free slot, freeing
	// slots before the sums, both, copying by bulk copies, that freeing
	// slots before the sums, and taking a unit in the barrier's wait, each
	// with 1 slot and 2 (pring_hx_s2 with 2), against pring_hx with 1 slot (the same matrices
	// and products: all of h's and x's buffers,
	// their int8 copies, scales and sums too).
	type at struct {
		f     ringForm
		depth int
	}
	both := func(names ...string) (c []at) { // each form with 1 slot a warp and 2, or its own depth
		for _, name := range names {
			f := ringForms[slices.IndexFunc(ringForms, func(f ringForm) bool { return f.name == name })]
			for _, d := range []int{1, 2} {
				if f.depth(d) == d {
					c = append(c, at{f, d})
				}
			}
		}
		return c
	}
	for _, c := range [][]at{
		append(both("pring/x8"), both("pring_hq/x8")[1]),
		both("pring_hx/x8", "pring_hx/x8/perm", "pring_hx/x8/hold", "pring_hx2/x8", "pring_hx_s2/x8", "pring_hx_ff/x8", "pring_hx_er/x8",
			"pring_hx_ffer/x8", "pring_hx_bulk/x8", "pring_hx_bulker/x8", "pring_hx_erp/x8", "pring_hx_df/x8",
			"pring_hx_l2/x8", "pring_hx_l4/x8", "pring_hx_fr/x8", "pring_hx_br/x8", "pring_hx_brs/x8", "pring_hx_brp/x8",
			"pring_hx_brl/x8", "pring_hx_brc/x8/c6", "pring_hx_brc/x8/c9", "pring_hx_brc/x8/c12", "pring_hx_brc/x8/c16", "pring_hx_brc/x8/c24",
			"pring_hx_brc8/x8/c8", "pring_hx_brc8/x8/c12", "pring_hx_brc8/x8/c16", "pring_hx_brc8/x8/c24", "pring_hx_brr/x8"),
	} {
		var ref []byte
		for _, r := range c {
			h, y, _, all, err := run(r.f, 7, r.depth)
			if err != nil {
				return err
			}
			out := all
			if !c[0].f.hx() {
				out = cuda.AsBytes(slices.Concat(h, y))
			}
			if ref == nil {
				ref = out
				continue
			}
			if !slices.Equal(ref, out) {
				return fmt.Errorf("%s: 7 phases with %d slots a warp differ from %s's with 1 slot", r.f.name, r.depth, c[0].f.name)
			}
			fmt.Printf("check %s: 7 phases with %d slots a warp bit-identical to %s's with 1 slot (ok)\n", r.f.name, r.depth, c[0].f.name)
		}
	}
	// pring_hx_brp: 4 launches of one FFN each, back to back with programmatic
	// dependent launch, leave the bits 4 plain launches leave (its
	// griddepcontrol.wait orders each launch's reads and writes after the
	// previous one's).
	brp := ringForms[slices.IndexFunc(ringForms, func(f ringForm) bool { return f.name == "pring_hx_brp/x8" })]
	// launchBrp launches one FFN of pring_hx_brp on the zeroed counter bar.
	launchBrp := func(depth int, pdl bool, bar cuda.DevPtr) error {
		return launchOn(e, ks[brp.kernel].fn, k.blocks, ks[brp.kernel].threads(), shared(depth), pdl, dph, 2, bar, brp.flags, int32(depth), int32(ringSlot))
	}
	ffns := func(pdl bool) ([]byte, error) {
		_, _, _, all, err := runWith(func() error {
			return fourOn(e, dbars, func(bar cuda.DevPtr) error { return launchBrp(2, pdl, bar) })
		})
		return all, err
	}
	if !e.PDL() {
		fmt.Printf("check %s under PDL: skipped, the engine does not use PDL here\n", brp.name)
	} else {
		plain, err := ffns(false)
		if err != nil {
			return err
		}
		pdl, err := ffns(true)
		if err != nil {
			return err
		}
		if !slices.Equal(plain, pdl) {
			return fmt.Errorf("%s: 4 launches of one FFN with PDL differ from 4 without", brp.name)
		}
		fmt.Printf("check %s: 4 launches of one FFN with PDL bit-identical to 4 without (ok)\n", brp.name)
	}

	var bytes float64
	for _, p := range ph {
		bytes += p.bytes()
	}
	for _, depth := range depths {
		for _, f := range ringForms {
			if f.depth(depth) != depth {
				continue
			}
			for _, sf := range []int{0, streamNoStage, streamNoDot, streamNoStage | streamNoDot} {
				t, err := evtime.PerCall(e, 3, 5, 5, func(int) error { return launch(f, n, depth, sf) })
				if err != nil {
					return err
				}
				fmt.Printf("chain ab hbm %-16s 9B q8_0 slots %d blocks %4d stage %-5v dot %-5v %7.3f µs/phase  %5.2f TB/s of weights\n",
					f.name, depth, k.blocks, sf&streamNoStage == 0, sf&streamNoDot == 0, t/float64(n)*1e6, bytes/t/1e12)
			}
		}
	}
	// One FFN a launch (the chain's first 2 phases: every FFN of the chain
	// has the same matrices, 160 MB, more than the L2 holds; a memset of the
	// barrier's counter before each), back to back on the stream: what a
	// form costs where a launch holds one layer's FFN and starts with its
	// ring empty (step 90; the graph's nodes overlap by PDL, these do not).
	for _, depth := range depths {
		for _, name := range []string{"pring_hx/x8", "pring_hx_er/x8", "pring_hx_br/x8"} {
			f := ringForms[slices.IndexFunc(ringForms, func(f ringForm) bool { return f.name == name })]
			if f.depth(depth) != depth {
				continue
			}
			t, err := evtime.PerCall(e, 3, 5, 10, func(int) error { return launch(f, 2, depth, 0) })
			if err != nil {
				return err
			}
			fmt.Printf("ffn a launch %-16s 9B q8_0 slots %d blocks %4d %7.3f µs/FFN  %5.2f TB/s of weights\n",
				f.name, depth, k.blocks, t*1e6, (ph[0].bytes()+ph[1].bytes())/t/1e12)
		}
		// pring_hx_brp: the same on counters zeroed beforehand, plain and with
		// programmatic dependent launch.
		if brp.depth(depth) != depth {
			continue
		}
		for _, pdl := range []bool{false, true} {
			if pdl && !e.PDL() {
				fmt.Println("ffn a launch pring_hx_brp/x8 with PDL: the engine does not use PDL here (it needs sm_90, a driver with cuLaunchKernelEx, and MEMRA_PDL != 0)")
				continue
			}
			t, err := perLaunchOn(e, dbars, brp.kernel, func(bar cuda.DevPtr) error { return launchBrp(depth, pdl, bar) })
			if err != nil {
				return err
			}
			fmt.Printf("ffn a launch %-16s 9B q8_0 slots %d blocks %4d %7.3f µs/FFN  %5.2f TB/s of weights  (counters zeroed beforehand, PDL %v)\n",
				brp.name, depth, k.blocks, t*1e6, (ph[0].bytes()+ph[1].bytes())/t/1e12, pdl)
		}
	}
	// A DeltaNet layer's three products after its mixer, at pring_hx_br's 2
	// slots (step 91).
	if slices.Contains(depths, 2) {
		if err := runLayer(layerRun{e, mem, ks["pring_hx_brl"], ks["pring_hx_brlp"], ks["pring_hx_brl_trace"], ks["pring_hx_brlr"], ks["pring_hx_brlr_trace"],
			ks["pring_hx_brm"], ks["pring_hx_brm_trace"], ks["pring_hx_brm4"], ks["pring_hx_brm4_trace"],
			ks["pring_hx_brm4s"], ks["pring_hx_brm4s_trace"], ks["pring_hx_brm4n"], ks["pring_hx_brm4n_trace"], w, x0, nw, dnw, shared(2)}, n); err != nil {
			return err
		}
	}
	// Where pring_hx's time goes, stamped by pring_hx_trace on the same
	// chain; then without its epilogue, and with it but without its stores
	// (timing only: the results are wrong), timed and stamped.
	depth := depths[len(depths)-1]
	for _, c := range []struct {
		name  string
		flags int
	}{{"", 0}, {" no epilogue", flagNoEpi}, {" epilogue without stores", flagNoQStore}, {"/hold", flagHold}} {
		if c.flags&(flagNoEpi|flagNoQStore) != 0 {
			t, err := evtime.PerCall(e, 3, 5, 5, func(int) error { return launch(ringForms[2], n, depth, c.flags) })
			if err != nil {
				return err
			}
			fmt.Printf("chain ab hbm %s%s 9B q8_0 slots %d blocks %4d %7.3f µs/phase\n", ringForms[2].name, c.name, depth, k.blocks, t/float64(n)*1e6)
		}
		if err := traceRing(e, mem, func(dtr cuda.DevPtr) error {
			return launchChain(e, tk.fn, k.blocks, k.threads(), shared(depth), dph, n, dbar, c.flags, int32(depth), int32(ringSlot), dtr)
		}, ringForms[2].name+c.name, n, k.blocks, depth, ph); err != nil {
			return err
		}
	}
	// pring_hx_er stamped the same way (step 89).
	if err := traceRing(e, mem, func(dtr cuda.DevPtr) error {
		return launchChain(e, tkER.fn, k.blocks, k.threads(), shared(depth), dph, n, dbar, 0, int32(depth), int32(ringSlot), dtr)
	}, "pring_hx_er/x8", n, k.blocks, depth, ph); err != nil {
		return err
	}
	// pring_hx_br and pring_hx_brs too, at their 2 slots (step 90), and
	// pring_hx_brc and pring_hx_brc8 at each cap (step 91).
	if depth == 2 {
		type traced struct {
			k     deepKernel
			name  string
			flags int
		}
		tc := []traced{{ks["pring_hx_br_trace"], "pring_hx_br/x8", 0}, {ks["pring_hx_brs_trace"], "pring_hx_brs/x8", 0}}
		for _, f := range ringForms {
			if f.kernel == "pring_hx_brc" || f.kernel == "pring_hx_brc8" {
				tc = append(tc, traced{ks[f.kernel+"_trace"], f.name, f.flags})
			}
		}
		for _, c := range tc {
			if err := traceRing(e, mem, func(dtr cuda.DevPtr) error {
				return launchChain(e, c.k.fn, k.blocks, k.threads(), shared(depth), dph, n, dbar, c.flags, int32(depth), int32(ringSlot), dtr)
			}, c.name, n, k.blocks, depth, ph); err != nil {
				return err
			}
		}
	}
	// The same chain with no rows: the grid barrier and x's staging alone
	// (staging false: the barrier alone), what the stream has to hide; and
	// pring_hx_df's flags and staging, writer by writer.
	for i := range ph {
		ph[i].rows, phPerm[i].rows = 0, 0
	}
	if err := upload(dph, ph); err != nil {
		return err
	}
	if err := upload(dphPerm, phPerm); err != nil {
		return err
	}
	for _, f := range append(ringForms[:3:3], ringForms[slices.IndexFunc(ringForms, func(f ringForm) bool { return f.done })]) {
		for _, sf := range []int{0, streamNoStage} {
			if sf != 0 && f.kernel != "pring" {
				continue
			}
			t, err := evtime.PerCall(e, 3, 5, 5, func(int) error { return launch(f, n, 1, sf) })
			if err != nil {
				return err
			}
			fmt.Printf("chain 0  no rows   %-16s 9B q8_0 blocks %4d stage %-5v %7.3f µs/phase\n", f.name, k.blocks, sf&streamNoStage == 0, t/float64(n)*1e6)
		}
	}
	return nil
}

// fourOn zeroes the first 4 of the pdlBars barrier counters at dbars (a
// 128-byte line each) and calls launch on each in turn: 4 launches back to
// back with no memset between them.
func fourOn(e *cuda.Engine, dbars cuda.DevPtr, launch func(bar cuda.DevPtr) error) error {
	if err := e.MemsetD32Async(dbars, 0, uint64(dfStride*4)); err != nil {
		return err
	}
	for i := range 4 {
		if err := launch(dbars + cuda.DevPtr(4*dfStride*i)); err != nil {
			return err
		}
	}
	return nil
}

// perLaunchOn times launch as the one-launch timings do (evtime.PerCall, 3
// calls, then 5 batches of 10), each call on the next of the pdlBars
// counters at dbars, all zeroed once before, so that no memset sits between
// two launches; a timing that would take more counters fails (kernel names
// it).
func perLaunchOn(e *cuda.Engine, dbars cuda.DevPtr, kernel string, launch func(bar cuda.DevPtr) error) (float64, error) {
	if err := e.MemsetD32Async(dbars, 0, uint64(dfStride*pdlBars)); err != nil {
		return 0, err
	}
	calls := 0
	return evtime.PerCall(e, 3, 5, 10, func(int) error {
		if calls == pdlBars {
			return fmt.Errorf("%s: more than %d launches on %d counters", kernel, pdlBars, pdlBars)
		}
		bar := dbars + cuda.DevPtr(4*dfStride*calls)
		calls++
		return launch(bar)
	})
}

// nanTail is what follows x's n floats in pring_hx (its int8, one f32
// scale and one f32 sum of squares a 32), as NaN floats.
func nanTail(n int) []float32 { return slices.Repeat([]float32{nanF32}, (n+8*n/32)/4) }

// nanH is h's n floats and what follows them in pring_hq (its int8 and one
// f32 scale a 32), as NaN floats.
func nanH(n int) []float32 { return slices.Repeat([]float32{nanF32}, (4*n+n+4*n/32)/4) }

// checkXQ checks x's int8, scales and sums of squares as pring_hx's down
// phase stores them (tail: what follows x's floats) against x·nw in f32
// rounded by quant8, exactly, and its sums of squares per 32 in float64:
// 32 positive terms rounded at most 7 deep (prg_quant_xn's 4 fmaf and 3
// adds), 7·2^-24 ≈ 4.2e-7 of the sum, checked to 1e-6.
func checkXQ(x, nw []float32, tail []byte) error {
	n := len(x)
	xf := make([]float32, n)
	for c := range xf {
		xf[c] = x[c] * nw[c]
	}
	xq, xd, _ := quant8(xf)
	d := unsafe.Slice((*float32)(unsafe.Pointer(&tail[n])), n/32)
	ss := unsafe.Slice((*float32)(unsafe.Pointer(&tail[n+4*(n/32)])), n/32)
	for g := range n / 32 {
		if float64(d[g]) != xd[g] {
			return fmt.Errorf("x's group %d: scale %g, want %g", g, d[g], xd[g])
		}
		var want float64
		for c := 32 * g; c < 32*g+32; c++ {
			if q := int8(tail[c]); float64(q)*xd[g] != xq[c] {
				return fmt.Errorf("x's element %d: int8 %d, want %g", c, q, xq[c]/xd[g])
			}
			want += float64(x[c]) * float64(x[c])
		}
		if !(math.Abs(float64(ss[g])-want) <= 1e-6*want) { // NaN fails too: a sum never stored
			return fmt.Errorf("x's group %d: sum of squares %g, want %g", g, ss[g], want)
		}
	}
	return nil
}

// pchain.cu's PRG_MAX_SLOTS.
const maxRingSlots = 4

// pchain.cu's PRG_TR record of a phase a block, field by field.
const (
	trFields = 18
	trBegin  = 0
	trStaged = 1
	trSums   = 2
	trEpi    = 3
	trBar    = 4
	trFull   = 5 // + the consumer warp
	trEmpty  = 13
	trFill0  = 14
	trFill1  = 15
	trNS     = 16
	trIssue  = 17
	trMix    = trFull // prm_mix4's 4 stamps in a mixer phase (pring_hx_brm4_trace)
)

// traceRing runs pring_hx_trace (launch, given the trace buffer; name, its
// form in the output) on the n phases ph with depth slots a warp, and
// prints where a phase's time goes for each kind, in µs: the mean over
// phases 2 to n−2 of that kind (the first two fill the ring, the last has
// no barrier) and over the blocks with the most groups of 32 units in
// that phase (in a gate|up phase the 120 of 132 with 3 groups, whose sums
// set the phase; the others finish early and wait at the barrier), of the
// gap from the previous phase's barrier to this phase's start (two stamps
// in a row: their own cost), then to x staged (the descriptor's load with
// it), to every warp's sums done, the epilogue (warp 0 quantising the
// block's groups), the grid barrier passed; what the consumer warps waited
// for their slots to fill, what the producer waited for them to free and
// spent issuing its copies, and how far ahead of the phase's start its
// first copy and of its sums' end its last copy were issued. The clock's
// rate comes from the global timer over the chain.
func traceRing(e *cuda.Engine, mem *devMem, launch func(cuda.DevPtr) error, name string, n, blocks, depth int, ph []phase) error {
	if n < 6 {
		return fmt.Errorf("trace: %d phases, need at least 6", n)
	}
	dtr, err := mem.alloc(uint64(8 * blocks * n * trFields))
	if err != nil {
		return err
	}
	t, err := evtime.PerCall(e, 1, 3, 3, func(int) error { return launch(dtr) })
	if err != nil {
		return err
	}
	tr := make([]uint64, blocks*n*trFields)
	if err := e.CopyDtoH(cuda.AsBytes(tr), dtr); err != nil {
		return err
	}
	rec := func(b, p int) []uint64 { return tr[(b*n+p)*trFields:][:trFields] }
	var ghz float64
	for b := range blocks {
		r0, r1 := rec(b, 1), rec(b, n-2)
		ghz += float64(r1[trBegin]-r0[trBegin]) / float64(r1[trNS]-r0[trNS]) / float64(blocks)
	}
	us := func(cycles float64) float64 { return cycles / ghz / 1e3 }
	fmt.Printf("trace %s slots %d: %.3f µs/phase with the stamps (SM clock %.2f GHz from the global timer)\n", name, depth, t/float64(n)*1e6, ghz)
	for _, c := range []struct {
		kind int32
		name string
	}{{kind9B, "gate|up"}, {kind9B + 1, "down"}, {kindMix, "mix"}, {kindOut, "out"}} {
		var gap, stage, sums, sumsMax, epi, bar, whole, full, empty, issue, lead, last float64
		var mixAt [4]float64    // kindMix: prm_mix4's stamps (trMix) after the phase's staged stamp
		var cnt, phases float64 // blocks averaged over the phases, and the phases
		heavy := 0
		for p := 2; p <= n-2; p++ {
			if ph[p].kind != c.kind {
				continue
			}
			// prg_groups: blocks below g mod blocks take one group more. In
			// a mixer phase the first mixHeads blocks have work in every
			// form (a head in pring_hx_brm; a quarter of one in the
			// four-block forms, whose other 96 working blocks do the same
			// work and are not averaged, nor taken for the slowest).
			heavy = blocks
			if ph[p].kind == kindMix {
				heavy = mixHeads
			} else if g := int(ph[p].rows) / units[ph[p].kind].r / 32; g%blocks != 0 {
				heavy = g % blocks
			}
			var worst float64
			for b := range heavy {
				r, prev := rec(b, p), rec(b, p-1)
				d := func(a, b int) float64 { return float64(int64(r[b] - r[a])) }
				gap += float64(int64(r[trBegin] - prev[trBar]))
				stage += d(trBegin, trStaged)
				sums += d(trStaged, trSums)
				worst = max(worst, d(trBegin, trSums))
				epi += d(trSums, trEpi)
				bar += d(trEpi, trBar)
				whole += d(trBegin, trBar)
				if c.kind == kindMix {
					// pring_hx_brm4_trace's stamps in the warps' wait fields;
					// the other forms leave them 0, and print none.
					for i := range mixAt {
						if r[trMix+i] != 0 {
							mixAt[i] += float64(int64(r[trMix+i] - r[trStaged]))
						}
					}
				} else {
					var f float64
					for w := range 8 {
						f += float64(r[trFull+w]) / 8
					}
					full += f
				}
				empty += float64(r[trEmpty])
				issue += float64(r[trIssue])
				lead += float64(int64(r[trBegin] - r[trFill0]))
				last += float64(int64(r[trSums] - r[trFill1]))
			}
			sumsMax += worst
			cnt += float64(heavy)
			phases++
		}
		if phases == 0 {
			continue // no phase of this kind in the chain
		}
		m := func(v float64) float64 { return us(v / cnt) }
		fmt.Printf("trace %-7s %d blocks: gap %.2f  staged %.2f  sums %.2f (slowest block %.2f after its start)  epilogue %.2f  barrier %.2f  phase %.2f µs | consumers wait for slots %.2f  producer waits %.2f, issues %.2f  first copy %.2f before the start  last %.2f before the sums end\n",
			c.name, heavy, m(gap), m(stage), m(sums), us(sumsMax/phases), m(epi), m(bar), m(whole), m(full), m(empty), m(issue), m(lead), m(last))
		if mixAt[3] != 0 {
			fmt.Printf("trace mix     thread 0, µs after the phase's staged stamp: q and k staged %.2f  kv summed (its state loaded) %.2f  o summed (its state stored) %.2f  outputs in shared memory %.2f  done %.2f\n",
				m(mixAt[0]), m(mixAt[1]), m(mixAt[2]), m(mixAt[3]), m(sums))
		}
	}
	return nil
}

package main

import (
	"fmt"
	"math/rand/v2"
	"slices"
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

// runNine checks pring on the 9B q8_0 FFN (the first FFN against float64,
// and 7 phases with one slot a warp against two and against pring_hq's
// two, bit for bit) and times both on a chain of n phases with each ring
// depth in depths, whole and with the staging or the sums left out; then
// on the same chain with no rows.
func runNine(cubin string, n int, depths []int) error {
	if n < 2 {
		return fmt.Errorf("-phases %d: need at least 2", n)
	}
	e, mod, _, err := xcmd.Kernel(cubin, "pring")
	if err != nil {
		return err
	}
	defer e.Close()
	// ks: pring and pring_hq (h quantised once, by the blocks that write it).
	var ks [2]deepKernel
	for i, name := range []string{"pring", "pring_hq"} {
		if ks[i], err = loadDeep(e, mod, name, 1); err != nil {
			return err
		}
	}
	k := ks[0]
	shared := func(depth int) int { return 8 * depth * ringSlot * 16 }
	for _, d := range depths {
		if d < 1 || d > maxRingSlots || shared(d) > k.room {
			return fmt.Errorf("pring: %d slots a warp take %d bytes a block (%d fit, at most %d slots)", d, shared(d), k.room, maxRingSlots)
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
	r := rand.New(rand.NewPCG(9, 9))
	x0, nw := make([]float32, nineShapes[0].cols), make([]float32, nineShapes[0].cols)
	for i := range x0 {
		x0[i] = float32(r.NormFloat64())
		nw[i] = float32(0.5 + r.Float64())
	}
	dx, err := mem.upload(cuda.AsBytes(x0))
	if err != nil {
		return err
	}
	dnw, err := mem.upload(cuda.AsBytes(nw))
	if err != nil {
		return err
	}
	// h, then (PRG_HQ) h in int8 and its scales a 32.
	nh := nineShapes[1].cols
	if groups := nh / 32; groups > 4*k.blocks {
		return fmt.Errorf("pring: %d groups of h over %d blocks, more than the 4 a block prg_quant_h takes", groups, k.blocks)
	}
	// NaNs over all of it before each checked launch: a group of h left
	// unquantised reads NaN scales.
	nans := slices.Repeat([]float32{nanF32}, (4*nh+nh+4*nh/32)/4)
	dh, err := mem.alloc(uint64(4 * len(nans)))
	if err != nil {
		return err
	}
	dbar, dph, err := mem.chain(n)
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
	if err := e.CopyHtoD(dph, unsafe.Slice((*byte)(unsafe.Pointer(&ph[0])), n*int(unsafe.Sizeof(phase{})))); err != nil {
		return err
	}
	launch := func(phases, depth, flags, hq int) error {
		return launchChain(e, ks[hq].fn, k.blocks, k.threads(), shared(depth), dph, phases, dbar, flags, int32(depth), int32(ringSlot))
	}
	// run launches the first `phases` phases from x0 with NaNs in h and
	// returns h and x.
	run := func(phases, depth, hq int) (h, y []float32, err error) {
		if err := e.CopyHtoD(dx, cuda.AsBytes(x0)); err != nil {
			return nil, nil, err
		}
		if err := e.CopyHtoD(dh, cuda.AsBytes(nans)); err != nil {
			return nil, nil, err
		}
		if err := launch(phases, depth, 0, hq); err != nil {
			return nil, nil, err
		}
		h, y = make([]float32, nineShapes[1].cols), make([]float32, nineShapes[0].cols)
		if err := e.CopyDtoH(cuda.AsBytes(h), dh); err != nil {
			return nil, nil, err
		}
		return h, y, e.CopyDtoH(cuda.AsBytes(y), dx)
	}

	want := ffnRef(w, x0, nw, true)
	for hq := range ks {
		h, y, err := run(2, depths[0], hq)
		if err != nil {
			return err
		}
		worst := max(want.checkH(h), want.checkX(&w[1], x0, h, y))
		if worst > 1 {
			return fmt.Errorf("%s: 9B q8_0 FFN error %.2f times its bound", ringForm(hq), worst)
		}
		fmt.Printf("check %s: 9B q8_0 FFN max error %.3g of its bound (ok)\n", ringForm(hq), worst)
	}
	// 7 phases: 2 slots a warp and h quantised once (pring_hq: the same
	// products and the same rounding of h, by other warps) against 1 slot.
	var ref []float32
	for _, c := range []struct{ depth, hq int }{{1, 0}, {2, 0}, {2, 1}} {
		h, y, err := run(7, c.depth, c.hq)
		if err != nil {
			return err
		}
		out := slices.Concat(h, y)
		if ref == nil {
			ref = out
			continue
		}
		if !slices.Equal(bitsOf(ref), bitsOf(out)) {
			return fmt.Errorf("%s: 7 phases with %d slots a warp differ from pring's with 1 slot", ringForm(c.hq), c.depth)
		}
		fmt.Printf("check %s: 7 phases with %d slots a warp bit-identical to pring's with 1 slot (ok)\n", ringForm(c.hq), c.depth)
	}

	var bytes float64
	for _, p := range ph {
		bytes += p.bytes()
	}
	for _, depth := range depths {
		for hq := range ks {
			for _, sf := range []int{0, streamNoStage, streamNoDot, streamNoStage | streamNoDot} {
				t, err := evtime.PerCall(e, 3, 5, 5, func(int) error { return launch(n, depth, sf, hq) })
				if err != nil {
					return err
				}
				fmt.Printf("chain ab hbm %-11s 9B q8_0 slots %d blocks %4d stage %-5v dot %-5v %7.3f µs/phase  %5.2f TB/s of weights\n",
					ringForm(hq), depth, k.blocks, sf&streamNoStage == 0, sf&streamNoDot == 0, t/float64(n)*1e6, bytes/t/1e12)
			}
		}
	}
	// The same chain with no rows: the grid barrier and x's staging alone
	// (staging false: the barrier alone), what the stream has to hide.
	empty := slices.Clone(ph)
	for i := range empty {
		empty[i].rows = 0
	}
	if err := e.CopyHtoD(dph, unsafe.Slice((*byte)(unsafe.Pointer(&empty[0])), n*int(unsafe.Sizeof(phase{})))); err != nil {
		return err
	}
	for _, c := range []struct{ flags, hq int }{{0, 0}, {0, 1}, {streamNoStage, 0}} {
		t, err := evtime.PerCall(e, 3, 5, 5, func(int) error { return launch(n, 1, c.flags, c.hq) })
		if err != nil {
			return err
		}
		fmt.Printf("chain 0  no rows   %-11s 9B q8_0 blocks %4d stage %-5v %7.3f µs/phase\n", ringForm(c.hq), k.blocks, c.flags&streamNoStage == 0, t/float64(n)*1e6)
	}
	return nil
}

// pchain.cu's PRG_MAX_SLOTS.
const maxRingSlots = 4

// ringForm names ks[hq] in the output (x' in int8 in both).
func ringForm(hq int) string {
	return [2]string{"pring/x8", "pring_hq/x8"}[hq]
}

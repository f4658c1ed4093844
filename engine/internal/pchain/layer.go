package main

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/internal/evtime"
)

// outShape is the 9B preset's output projections (ssm_out, attn_output):
// 4096 × 4096 into the residual, pchain.cu's kind 7.
var outShape = shape{4096, 4096}

// kindOut is pc_phase.kind of an output projection phase (a down kind).
const kindOut = 7

// layerRun is what runLayer takes from runNine: the engine, its memory, the
// kernels (pring_hx_brl, pring_hx_brlp for programmatic dependent launch,
// pring_hx_brl_trace, pring_hx_brlr, pring_hx_brl with a down phase's
// residuals loaded at its start, with its trace, and pring_hx_brm,
// pring_hx_brm4, pring_hx_brm4s and pring_hx_brm4n, pring_hx_brl with
// mixer phases, with their traces), the FFN's matrices, its
// input x0 and norm weights nw (on the device at dnw), and the dynamic
// shared memory of 2 slots a warp.
type layerRun struct {
	e                                    *cuda.Engine
	mem                                  *devMem
	brl, brlp, brlTrace, brlr, brlrTrace deepKernel
	brm, brmTrace, brm4, brm4Trace       deepKernel
	brm4s, brm4sTrace, brm4n, brm4nTrace deepKernel
	w                                    [2]weights
	x0, nw                               []float32
	dnw                                  cuda.DevPtr
	shared                               int
}

// runLayer checks and times pring_hx_brl on the products of a 9B DeltaNet
// layer that read all of their input (step 91): its output projection into
// the residual, then the FFN's gate|up and down, each a phase behind a grid
// barrier, the layer's mixer left out. Two residuals take turns, so that
// no phase reads the int8 copy its own epilogue rewrites: gate|up reads x2
// (x0 at first), down adds into x1 (x0 at first), the projection reads x1
// (rounded as x1·nw, as the down phase's epilogue rounds it for the next
// phase's norm; it takes no 1/rms) and adds into x2. The chain repeats that
// layer over ⌊n/3⌋·3 phases, starting at gate|up (gate|up, down,
// projection, gate|up, ...), since a chain's first gate|up phase rounds its
// x from f32; one launch of projection, gate|up and down is
// a layer's tail as an engine would launch it after the mixer.
func runLayer(r layerRun, n int) error {
	e, mem, w := r.e, r.mem, r.w
	wo := weights{s: outShape}
	wo.quants, wo.scales = randomQ8(outShape, 17)
	dwo, err := mem.upload(wo.device())
	if err != nil {
		return err
	}
	nx, nh := outShape.cols, nineShapes[1].cols
	if nineShapes[0].cols != nx || nineShapes[1].rows != nx || outShape.rows != nx {
		return fmt.Errorf("layer: %v, %v and %v do not chain", nineShapes[0], nineShapes[1], outShape)
	}
	xInit, hNaN := slices.Concat(r.x0, nanTail(nx)), nanH(nh)
	var dx1, dx2, dh cuda.DevPtr
	for _, p := range []*cuda.DevPtr{&dx1, &dx2} {
		if *p, err = mem.alloc(uint64(4 * len(xInit))); err != nil {
			return err
		}
	}
	if dh, err = mem.alloc(uint64(4 * len(hNaN))); err != nil {
		return err
	}
	gu := phase{w: uint64(w[0].copies[0]), x: uint64(dx2), y: uint64(dh), norm: uint64(r.dnw), mode: modeSwiGLU,
		rows: int32(nineShapes[0].rows), cols: int32(nineShapes[0].cols), kind: kind9B}
	dn := phase{w: uint64(w[1].copies[0]), x: uint64(dh), y: uint64(dx1), mode: modeAdd,
		rows: int32(nineShapes[1].rows), cols: int32(nineShapes[1].cols), kind: kind9B + 1}
	out := phase{w: uint64(dwo), x: uint64(dx1), y: uint64(dx2), norm: uint64(r.dnw), mode: modeAdd,
		rows: int32(outShape.rows), cols: int32(outShape.cols), kind: kindOut}
	nl := n / 3 * 3
	chain := make([]phase, nl)
	for i := range chain {
		chain[i] = []phase{gu, dn, out}[i%3]
	}
	tail := []phase{out, gu, dn}
	dbar, dchain, err := mem.chain(nl)
	if err != nil {
		return err
	}
	dtail, err := mem.upload(unsafe.Slice((*byte)(unsafe.Pointer(&tail[0])), len(tail)*int(unsafe.Sizeof(phase{}))))
	if err != nil {
		return err
	}
	if err := e.CopyHtoD(dchain, unsafe.Slice((*byte)(unsafe.Pointer(&chain[0])), nl*int(unsafe.Sizeof(phase{})))); err != nil {
		return err
	}
	launch := func(k deepKernel, ph cuda.DevPtr, phases, flags int) error {
		return launchChain(e, k.fn, k.blocks, k.threads(), r.shared, ph, phases, dbar, flags, int32(2), int32(ringSlot))
	}
	// runWith sets x1, x2 to x0 with NaN tails and h to NaNs, calls launch,
	// and returns h, x1 and x2 with their tails, and all three buffers as
	// bytes (runNine's runWith, over this chain's three buffers).
	type out3 struct {
		h, x1, x2 []float32
		t1, t2    []byte
		all       []byte
	}
	runWith := func(launch func() error) (o out3, err error) {
		for _, p := range []cuda.DevPtr{dx1, dx2} {
			if err := e.CopyHtoD(p, cuda.AsBytes(xInit)); err != nil {
				return o, err
			}
		}
		if err := e.CopyHtoD(dh, cuda.AsBytes(hNaN)); err != nil {
			return o, err
		}
		if err := launch(); err != nil {
			return o, err
		}
		h, x1, x2 := make([]float32, len(hNaN)), make([]float32, len(xInit)), make([]float32, len(xInit))
		for _, c := range []struct {
			dst []float32
			src cuda.DevPtr
		}{{h, dh}, {x1, dx1}, {x2, dx2}} {
			if err := e.CopyDtoH(cuda.AsBytes(c.dst), c.src); err != nil {
				return o, err
			}
		}
		return out3{h[:nh], x1[:nx], x2[:nx], cuda.AsBytes(x1[nx:]), cuda.AsBytes(x2[nx:]),
			slices.Concat(cuda.AsBytes(h), cuda.AsBytes(x1), cuda.AsBytes(x2))}, nil
	}
	// run is runWith of one pring_hx_brl launch of the first phases of ph.
	run := func(ph cuda.DevPtr, phases int) (out3, error) {
		return runWith(func() error { return launch(r.brl, ph, phases, 0) })
	}
	// xw is x·nw in f32: the projection's input before quant8 rounds it,
	// as prg_quant_xn multiplies it.
	xw := func(x []float32) []float32 {
		v := make([]float32, len(x))
		for c := range v {
			v[c] = x[c] * r.nw[c]
		}
		return v
	}
	x8 := ffn{x8: true} // checkX with its input rounded by quant8

	// 3 phases: gate|up and down as the FFN checks have them, x1 in int8 as
	// the down phase stores it for the projection, and the projection's x2.
	o3, err := run(dchain, 3)
	if err != nil {
		return err
	}
	ref := ffnRefHX(w, r.x0, r.nw)
	if worst := max(ref.checkH(o3.h), ref.checkX(&w[1], r.x0, o3.h, o3.x1)); worst > 1 {
		return fmt.Errorf("pring_hx_brl: the layer's gate|up and down: error %.2f times its bound", worst)
	}
	if err := checkXQ(o3.x1, r.nw, o3.t1); err != nil {
		return fmt.Errorf("pring_hx_brl: x1 for the projection: %w", err)
	}
	if worst := x8.checkX(&wo, r.x0, xw(o3.x1), o3.x2); worst > 1 {
		return fmt.Errorf("pring_hx_brl: the output projection from x1 in int8: error %.2f times its bound", worst)
	}
	// 4 phases: x2 in int8 as the projection stores it, and the next
	// gate|up phase from it; x1 and x2 as after 3.
	o4, err := run(dchain, 4)
	if err != nil {
		return err
	}
	if !slices.Equal(bitsOf(o4.x1), bitsOf(o3.x1)) || !slices.Equal(bitsOf(o4.x2), bitsOf(o3.x2)) {
		return fmt.Errorf("pring_hx_brl: x1 or x2 after 4 phases differs from after 3")
	}
	if err := checkXQ(o4.x2, r.nw, o4.t2); err != nil {
		return fmt.Errorf("pring_hx_brl: x2 as the projection stores it: %w", err)
	}
	if worst := ffnRefHX(w, o4.x2, r.nw).checkH(o4.h); worst > 1 {
		return fmt.Errorf("pring_hx_brl: gate|up from x2 in int8: error %.2f times its bound", worst)
	}
	fmt.Printf("check pring_hx_brl/x8: the layer's chain, gate|up, down, output projection, gate|up, against float64 and x's int8 exactly (ok)\n")
	// pring_hx_brlr: 7 phases of the layer's chain bit for bit as pring_hx_brl's.
	o7, err := run(dchain, 7)
	if err != nil {
		return err
	}
	o7r, err := runWith(func() error { return launch(r.brlr, dchain, 7, 0) })
	if err != nil {
		return err
	}
	if !slices.Equal(o7.all, o7r.all) {
		return fmt.Errorf("pring_hx_brlr: 7 phases of the layer's chain differ from pring_hx_brl's")
	}
	fmt.Printf("check pring_hx_brlr/x8: 7 phases of the layer's chain bit-identical to pring_hx_brl's (ok)\n")
	for _, m := range []struct {
		k    deepKernel
		name string
	}{{r.brm, "pring_hx_brm"}, {r.brm4, "pring_hx_brm4"}, {r.brm4s, "pring_hx_brm4s"}, {r.brm4n, "pring_hx_brm4n"}} {
		o7m, err := runWith(func() error { return launch(m.k, dchain, 7, 0) })
		if err != nil {
			return err
		}
		if !slices.Equal(o7.all, o7m.all) {
			return fmt.Errorf("%s: 7 phases of the layer's chain differ from pring_hx_brl's", m.name)
		}
		fmt.Printf("check %s/x8: 7 phases of the layer's chain (no mixer) bit-identical to pring_hx_brl's (ok)\n", m.name)
	}

	// One layer's tail a launch: the projection first, its x1·nw rounded by
	// every block from f32 (prg_stage_xn, as a chain's first gate|up phase
	// is; with L a first phase of a down kind is too). Its last phase, down,
	// quantises nothing, so x1's int8 copy stays NaN: a tail that read it
	// would fail here.
	ot, err := run(dtail, 3)
	if err != nil {
		return err
	}
	if worst := x8.checkX(&wo, r.x0, xw(r.x0), ot.x2); worst > 1 {
		return fmt.Errorf("pring_hx_brl: a tail's projection: error %.2f times its bound", worst)
	}
	if err := checkXQ(ot.x2, r.nw, ot.t2); err != nil {
		return fmt.Errorf("pring_hx_brl: a tail's x2 in int8: %w", err)
	}
	if worst := max(ffnRefHX(w, ot.x2, r.nw).checkH(ot.h), x8.checkX(&w[1], r.x0, ot.h, ot.x1)); worst > 1 {
		return fmt.Errorf("pring_hx_brl: a tail's gate|up and down: error %.2f times its bound", worst)
	}
	fmt.Printf("check pring_hx_brl/x8: a layer's tail (projection, gate|up, down) in one launch against float64 (ok)\n")

	// pring_hx_brlp: 4 tails, back to back with programmatic dependent
	// launch, leave the bits of 4 plain launches (as pring_hx_brp's check).
	dbars, err := mem.alloc(uint64(4 * dfStride * pdlBars))
	if err != nil {
		return err
	}
	launchTail := func(pdl bool, bar cuda.DevPtr) error {
		return launchOn(e, r.brlp.fn, r.brlp.blocks, r.brlp.threads(), r.shared, pdl, dtail, 3, bar, 0, int32(2), int32(ringSlot))
	}
	tails := func(pdl bool) ([]byte, error) {
		o, err := runWith(func() error {
			return fourOn(e, dbars, func(bar cuda.DevPtr) error { return launchTail(pdl, bar) })
		})
		return o.all, err
	}
	plain, err := tails(false)
	if err != nil {
		return err
	}
	if !e.PDL() {
		fmt.Println("check pring_hx_brlp/x8 under PDL: skipped, the engine does not use PDL here")
	} else {
		pdl, err := tails(true)
		if err != nil {
			return err
		}
		if !slices.Equal(plain, pdl) {
			return fmt.Errorf("pring_hx_brlp: 4 tails with PDL differ from 4 without")
		}
		fmt.Printf("check pring_hx_brlp/x8: 4 tails with PDL bit-identical to 4 without (ok)\n")
	}
	// And 4 plain tails of pring_hx_brlp leave what 4 of pring_hx_brl leave.
	o, err := runWith(func() error {
		for range 4 {
			if err := launch(r.brl, dtail, 3, 0); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if !slices.Equal(o.all, plain) {
		return fmt.Errorf("pring_hx_brlp: 4 tails differ from pring_hx_brl's")
	}
	fmt.Printf("check pring_hx_brlp/x8: 4 tails bit-identical to pring_hx_brl's (ok)\n")

	// Timing: the chain, whole and with the staging or the sums left out.
	var layer float64
	for _, p := range tail {
		layer += p.bytes()
	}
	for _, c := range []struct {
		k, tr deepKernel
		name  string
	}{{r.brl, r.brlTrace, "pring_hx_brl/x8"}, {r.brlr, r.brlrTrace, "pring_hx_brlr/x8"}, {r.brm, r.brmTrace, "pring_hx_brm/x8"},
		{r.brm4, r.brm4Trace, "pring_hx_brm4/x8"}, {r.brm4s, r.brm4sTrace, "pring_hx_brm4s/x8"}, {r.brm4n, r.brm4nTrace, "pring_hx_brm4n/x8"}} {
		for _, sf := range []int{0, streamNoStage, streamNoDot, streamNoStage | streamNoDot} {
			t, err := evtime.PerCall(e, 3, 5, 5, func(int) error { return launch(c.k, dchain, nl, sf) })
			if err != nil {
				return err
			}
			per := t / float64(nl/3)
			fmt.Printf("layer chain %-16s 9B q8_0 slots 2 blocks %4d stage %-5v dot %-5v %7.3f µs/layer (%d layers)  %5.2f TB/s of weights\n",
				c.name, c.k.blocks, sf&streamNoStage == 0, sf&streamNoDot == 0, per*1e6, nl/3, layer/per/1e12)
		}
		// Where the chain's time goes, phase by phase.
		if err := traceRing(e, mem, func(dtr cuda.DevPtr) error {
			return launchChain(e, c.tr.fn, c.tr.blocks, c.tr.threads(), r.shared, dchain, nl, dbar, 0, int32(2), int32(ringSlot), dtr)
		}, c.name+" layer", nl, c.k.blocks, 2, chain); err != nil {
			return err
		}
	}
	// A tail a launch: pring_hx_brl with a memset a launch, pring_hx_brlp on
	// counters zeroed beforehand, plain and with PDL.
	t, err := evtime.PerCall(e, 3, 5, 10, func(int) error { return launch(r.brl, dtail, 3, 0) })
	if err != nil {
		return err
	}
	fmt.Printf("tail a launch pring_hx_brl/x8  9B q8_0 slots 2 blocks %4d %7.3f µs/tail  %5.2f TB/s of weights\n", r.brl.blocks, t*1e6, layer/t/1e12)
	for _, pdl := range []bool{false, true} {
		if pdl && !e.PDL() {
			fmt.Println("tail a launch pring_hx_brlp/x8 with PDL: the engine does not use PDL here")
			continue
		}
		t, err := perLaunchOn(e, dbars, "pring_hx_brlp", func(bar cuda.DevPtr) error { return launchTail(pdl, bar) })
		if err != nil {
			return err
		}
		fmt.Printf("tail a launch pring_hx_brlp/x8 9B q8_0 slots 2 blocks %4d %7.3f µs/tail  %5.2f TB/s of weights  (counters zeroed beforehand, PDL %v)\n",
			r.brlp.blocks, t*1e6, layer/t/1e12, pdl)
	}
	return runMix(r, mixSetup{&wo, gu, dn, out, dx1, dx2, dh, dbar, xInit, hNaN, o3.h, o3.x1}, n)
}

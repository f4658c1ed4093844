package gpu

import (
	"fmt"
	"os"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// A mixed launch runs a group's two matrices of different K-quant types
// (a Q6_K one beside a Q4_K or Q5_K one: llama-quantize's Q4_K_M and
// Q5_K_M layers) as one kernel, matvec_mix.cu, its grid split between
// them: one graph node where there were two, each part's sums those of
// the kernel it would have launched alone.

// mixLaunch is a group's mixed launch: kernel v, a the index among the
// group's launches of its part A (the Q6_K one; the other is B), and the
// blocks of the grid each part takes. The zero value is none.
type mixLaunch struct {
	v      MatvecMixVariant
	a      int
	blocks [2]int
}

// on reports whether the group launches as one.
func (m mixLaunch) on() bool { return m.blocks[0] > 0 }

// mixOffFromEnv reports whether MEMRA_MIX=0 keeps every group's launches
// apart (for measuring what the mixed launch saves); a value other than 0
// or 1 is an error.
func mixOffFromEnv() (bool, error) {
	switch v := os.Getenv("MEMRA_MIX"); v {
	case "", "1":
		return false, nil
	case "0":
		return true, nil
	default:
		return false, fmt.Errorf("MEMRA_MIX=%q: want 0 (a launch for each type of a layer's input projections) or 1 (one for two types, the default), or unset", v)
	}
}

// mixKernel is the matvec_mix kernel whose parts are the decode kernels of
// variants a and b.
func mixKernel(a, b MatvecVariant) (kernels.MatvecMixKernel, bool) {
	for _, mk := range kernels.MatvecMixKernels() {
		pa, pb := mk.Parts()
		if variantOf(pa) == a && variantOf(pb) == b {
			return mk, true
		}
	}
	return kernels.MatvecMixKernel{}, false
}

// mixSplit is the grid of a mixed launch whose parts have ua and ub row
// units (one block each) and move ba and bb bytes, on a GPU that holds
// resident of its blocks at once: a block per unit where they all fit in
// one wave, else the resident blocks shared in proportion to the bytes,
// each part at least one block and at most a block per unit, and what one
// part cannot use going to the other.
func mixSplit(ua, ub int, ba, bb uint64, resident int) [2]int {
	if ua+ub <= resident || resident < 2 {
		return [2]int{ua, ub}
	}
	ga := int((uint64(resident)*ba + (ba+bb)/2) / (ba + bb))
	ga = max(1, min(ga, ua, resident-1))
	gb := max(1, min(resident-ga, ub))
	return [2]int{min(ua, resident-gb), gb}
}

// planMix sets grp's mixed launch where it has two launches, a Q6_K
// one and a Q4_K or Q5_K one, whose kernels (as mvRoom picks them, the
// wave and lean forms excepted) a matvec_mix kernel pairs, and that kernel
// fits the GPU's shared memory at their width: optin is what a block may
// take (blockShared), sms the GPU's SMs. Otherwise grp keeps its launches.
func (g *Model) planMix(grp *mvGroup, optin, sms int) error {
	grp.mix = mixLaunch{}
	if grp.n != 2 {
		return nil
	}
	a := 0
	if grp.w[1].typ == gguf.TypeQ6_K {
		a = 1
	}
	wa, wb := grp.w[a], grp.w[1-a]
	va, ka, oka := g.mvRoom.pick(wa.typ, wa.wideKey(), wa.cols)
	vb, kb, okb := g.mvRoom.pick(wb.typ, wb.wideKey(), wb.cols)
	if !oka || !okb || wa.cols != wb.cols || wa.ptr == 0 || wb.ptr == 0 {
		return nil
	}
	mk, ok := mixKernel(va, vb)
	if !ok {
		return nil
	}
	fn, err := g.e.Function(g.mod, mk.Name)
	if err != nil {
		return err
	}
	static, err := g.e.FuncAttribute(fn, cuda.FuncSharedSizeBytes)
	if err != nil {
		return fmt.Errorf("%s: %w", mk.Name, err)
	}
	need := mk.Shared(wa.cols)
	if need > optin-static {
		return nil
	}
	// Every mixed group reads a layer's input (n_embd columns), so the
	// attribute set here covers them all.
	if err := g.e.SetFuncAttribute(fn, cuda.FuncMaxDynamicSharedSizeBytes, need); err != nil {
		return fmt.Errorf("%s: allow %d bytes of shared memory: %w", mk.Name, need, err)
	}
	per, err := g.e.MaxActiveBlocksPerSM(fn, kernels.MatvecThreads, need)
	if err != nil {
		return fmt.Errorf("occupancy of %s: %w", mk.Name, err)
	}
	if per == 0 {
		return nil
	}
	grp.mix = mixLaunch{
		v: MatvecMixVariant{TypeA: int(wa.typ), WideA: va.Wide, TypeB: int(wb.typ), WideB: vb.Wide},
		a: a,
		blocks: mixSplit(kernelUnits(ka, wa.rows), kernelUnits(kb, wb.rows), wa.ggufBytes(), wb.ggufBytes(),
			per*sms),
	}
	return nil
}

// matvecMix is matvecs for a group with a mixed launch: both products of
// (rmsnorm'd, with norm != 0) x in one kernel.
func (g *Model) matvecMix(grp mvGroup, mode int32, x cuda.DevPtr, ys []cuda.DevPtr, norm cuda.DevPtr) error {
	m := grp.mix
	wa, wb := grp.w[m.a], grp.w[1-m.a]
	xnorm, normBytes := normArgs(norm, wa.cols)
	bytes := wa.ggufBytes() + wb.ggufBytes() + normBytes
	if err := tensorCoreAligned(x, norm); err != nil {
		return fmt.Errorf("%s and %s: %w", wa.name, wb.name, err)
	}
	if m.blocks[0] < 1 || m.blocks[1] < 1 {
		return fmt.Errorf("%s and %s: a mixed launch of %d and %d blocks (each part needs one)", wa.name, wb.name, m.blocks[0], m.blocks[1])
	}
	g.note(launchShape{wa.rows + wb.rows, wa.cols, "×"}, bytes, 0)
	err := g.k.MatvecMix(m.v, ys[grp.first[m.a]], wa.ptr, int32(wa.rows), int32(m.blocks[0]), ys[grp.first[1-m.a]], wb.ptr,
		int32(wb.rows), x, int32(wa.cols), mode, norm, xnorm, g.cfg.NormEps, m.blocks[0]+m.blocks[1])
	if err != nil {
		return fmt.Errorf("%s and %s: %w", wa.name, wb.name, err)
	}
	return nil
}

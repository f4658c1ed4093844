package gpu

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// TestGPUKernelLogitsScreen: the screened argmax (matvec_q8_0 on
// screenRow's copy, logits_screen_bound, logits_screen_verify,
// argmax_final) must pick the token argmax_partial and argmax_final pick
// from matvec_bf16's or _f16's full logits, with the norm fused and
// without, on random rows and on rows made to tie or nearly tie with the
// winner; every candidate's exact logit must be the full kernel's to the
// bit, and with every row a candidate (c = +Inf) every row's. The
// screened top k (every row's lower bound, topK of them, logits_screen_top,
// topK) must be the host's top k of the full logits, ids and values, with
// each row the full kernel's logit or -Inf.
func TestGPUKernelLogitsScreen(t *testing.T) {
	v := ktGPU(t)
	type setup struct {
		name string
		// edit changes w (the f32 values before rounding to the type) and x
		// given the unedited full logits' top kernels.TopKMax, best first.
		edit func(w, x []float32, rows, cols int, rank []int32)
		all  bool // every row a candidate
	}
	copyRow := func(w []float32, cols, from, to int) { copy(w[to*cols:(to+1)*cols], w[from*cols:(from+1)*cols]) }
	setups := []setup{
		{name: "random"},
		{name: "all-candidates", all: true},
		{name: "ties", edit: func(w, x []float32, rows, cols int, rank []int32) {
			// The winner's row again, before it and in another chunk: the
			// lowest index must win.
			top := int(rank[0])
			copyRow(w, cols, top, rows-1)
			copyRow(w, cols, top, top/3)
			copyRow(w, cols, top, (top+kernels.ArgmaxChunk)%rows)
		}},
		{name: "ties-at-k", edit: func(w, x []float32, rows, cols int, rank []int32) {
			// The k-th's row twice more, so that three rows tie across the
			// top k's edge (ranks k-1 to k+1, or one higher where a copy
			// replaced a row of the top k): the lower ids must rank.
			kth := int(rank[kernels.TopKMax-1])
			copyRow(w, cols, kth, rows-2)
			copyRow(w, cols, kth, (kth+kernels.ArgmaxChunk/2)%rows)
		}},
		{name: "near-ties", edit: func(w, x []float32, rows, cols int, rank []int32) {
			top := int(rank[0])
			// Rows that differ from the winner's in one weight by about a
			// rounding's worth: the bounds cannot tell them apart.
			for k := 1; k <= 8; k++ {
				to := (top + k*2311) % rows
				copyRow(w, cols, top, to)
				w[to*cols+k*7] *= 1 + float32(k%2*2-1)*0x1p-7
			}
		}},
		{name: "nan-weight-in-winner", edit: func(w, x []float32, rows, cols int, rank []int32) {
			w[int(rank[0])*cols+5] = float32(math.NaN())
		}},
		{name: "huge-weights", edit: func(w, x []float32, rows, cols int, rank []int32) {
			// A block whose scale overflows f16 (c = +Inf: always a candidate).
			for i := range 32 {
				w[(rows/2)*cols+64+i] = 1e30
			}
		}},
		{name: "nan-input", edit: func(w, x []float32, rows, cols int, rank []int32) { x[3] = float32(math.NaN()) }},
		{name: "overflow", edit: func(w, x []float32, rows, cols int, rank []int32) {
			top := int(rank[0])
			// The winner's weights as large as a q8_0 block's f16 scale
			// allows, with x's signs, and x near 1e29 (unnormalised, where
			// the norm is not fused): its 16-bit sum overflows to +Inf.
			for i := range cols {
				x[i] *= 1e29
				w[top*cols+i] = float32(math.Copysign(8e6, float64(x[i])))
			}
		}},
	}
	for _, typ := range []gguf.Type{gguf.TypeBF16, gguf.TypeF16} {
		for _, cols := range []int{1024, 4096} {
			for _, xnorm := range []int32{1, 0} {
				for si, su := range setups {
					// Every case on bf16 with the norm fused; f16's sums and
					// the unfused input on the cases that reach them (their
					// kernels differ from those only there), and the
					// overflow where x is not normalised, which keeps the
					// suite inside lib.sh gpu_tests' time.
					common := su.name == "random" || su.name == "all-candidates" || su.name == "ties" || su.name == "ties-at-k"
					if typ == gguf.TypeF16 && !common || xnorm == 0 && !common && su.name != "overflow" {
						continue
					}
					rows := 20000
					if cols == 4096 {
						rows = 9000
					}
					name := fmt.Sprintf("%s/%d/xnorm=%d/%s", typ, cols, xnorm, su.name)
					t.Run(name, func(t *testing.T) {
						seed := uint64(7000 + si + 10*cols + int(xnorm))
						// x' is not finite where an input is NaN, or where
						// the overflow case's x (near 1e29) is normalised.
						screens := !su.all && su.name != "nan-input" && (su.name != "overflow" || xnorm == 0)
						ktScreenCase(t, v, typ, rows, cols, xnorm, seed, su.edit, su.all, screens)
					})
				}
			}
		}
	}
	// The top k all in one chunk of 18 (m = 8 a chunk): the threshold
	// falls below the k-th largest lower bound, and more rows are
	// candidates, but the top k must be the same.
	t.Run("BF16/256/xnorm=1/top-in-one-chunk", func(t *testing.T) {
		ktScreenCase(t, v, gguf.TypeBF16, 18*kernels.ArgmaxChunk-100, 256, 1, 7999, func(w, x []float32, rows, cols int, rank []int32) {
			// Rows 0..k-1 take the top k's rows, in rank order, and the rows
			// they held go where the top k's were: a permutation.
			top := map[int]bool{}
			for _, r := range rank {
				top[int(r)] = true
			}
			var free []int // top k rows outside 0..k-1
			for _, r := range rank {
				if int(r) >= len(rank) {
					free = append(free, int(r))
				}
			}
			old := slices.Clone(w[:len(rank)*cols])
			tops := make([][]float32, len(rank))
			for i, r := range rank {
				tops[i] = slices.Clone(w[int(r)*cols : (int(r)+1)*cols])
			}
			for i := range rank {
				if !top[i] { // a row of 0..k-1 outside the top k moves out
					copy(w[free[0]*cols:(free[0]+1)*cols], old[i*cols:(i+1)*cols])
					free = free[1:]
				}
			}
			for i := range rank {
				copy(w[i*cols:(i+1)*cols], tops[i])
			}
		}, false, true)
	})
	// Every row a candidate over 72 top blocks: the list of their best
	// (72 x 64 pairs) takes the last block three rounds to merge.
	t.Run("BF16/256/xnorm=1/all-candidates-many-blocks", func(t *testing.T) {
		ktScreenCase(t, v, gguf.TypeBF16, 18*kernels.ArgmaxChunk-100, 256, 1, 8001, nil, true, false)
	})
	// Fewer rows than k: the top k's last places empty (value 0, id -1).
	t.Run("BF16/256/xnorm=1/fewer-than-k", func(t *testing.T) {
		ktScreenCase(t, v, gguf.TypeBF16, kernels.TopKMax-9, 256, 1, 8002, nil, false, false)
	})
}

// ktScreenCase runs one TestGPUKernelLogitsScreen case.
// screens: the rows and x' have finite bounds, so most rows must be left
// out.
func ktScreenCase(t *testing.T, v *ktEnv, typ gguf.Type, rows, cols int, xnorm int32, seed uint64, edit func(w, x []float32, rows, cols int, rank []int32), all, screens bool) {
	const eps = 1e-6
	r := ktRand(seed)
	w := ktUniform(r, rows*cols, -1, 1)
	x := ktUniform(r, cols, -2, 2)
	normW := ktUniform(r, cols, 0.5, 1.5)
	dnorm := ktUpload(t, v, normW, 0)
	parts := (rows + kernels.ArgmaxChunk - 1) / kernels.ArgmaxChunk
	full := func(wt *model.Tensor, dx cuda.DevPtr) ([]float32, int32) {
		dw, _ := ktWeights(t, v, wt, 0, false)
		y := v.alloc(t, 4*rows)
		mv := v.k.MatvecBF16
		if typ == gguf.TypeF16 {
			mv = v.k.MatvecF16
		}
		ktMust(t, mv(y, dw, dx, int32(rows), int32(cols), 0, dnorm, xnorm, eps, (rows+7)/8))
		pv, pi, out := v.alloc(t, 4*parts), v.alloc(t, 4*parts), v.alloc(t, 4)
		ktMust(t, v.k.ArgMaxPartial(pv, pi, y, int32(rows)))
		ktMust(t, v.k.ArgMaxFinal(out, 0, 0, pv, pi, int32(rows)))
		return ktGet[float32](t, v, y, rows), ktGet[int32](t, v, out, 1)[0]
	}
	dx := ktUpload(t, v, x, 0)
	wt := ktTensor(t, "w", typ, w, cols, rows)
	if edit != nil {
		l, top := full(wt, dx)
		if top < 0 {
			t.Fatalf("the unedited logits have no argmax")
		}
		rank, _ := ktTopK(l, kernels.TopKMax)
		edit(w, x, rows, cols, rank)
		wt = ktTensor(t, "w", typ, w, cols, rows)
		ktPut(t, v, dx, x)
	}
	logits, want := full(wt, dx)

	// The copy, as Load builds it.
	h := buildScreen(wt)
	c := h.c
	if all {
		for i := range c {
			c[i] = float32(math.Inf(1))
		}
	}
	qt := &model.Tensor{Name: "screen", Type: gguf.TypeQ8_0, Shape: []int{cols, rows}, Data: h.q}
	dq, ds := ktWeights(t, v, qt, 0, false)
	dw, _ := ktWeights(t, v, wt, 0, false)
	dc := ktUpload(t, v, c, 0)
	a := v.alloc(t, 4*rows)
	ktMust(t, v.k.MatvecQ8_0(a, dq, ds, dx, int32(rows), int32(cols), 0, dnorm, xnorm, eps, (rows+3)/4))
	lo := v.alloc(t, 4*parts)
	ktMust(t, v.k.LogitsScreenBound(lo, 0, a, dc, dx, dnorm, xnorm, eps, int32(rows), int32(cols)))
	exact := v.alloc(t, 4*rows)
	v.poison(t, exact, rows, ktNaN)
	pv, pi, out := v.alloc(t, 4*parts), v.alloc(t, 4*parts), v.alloc(t, 4)
	verify := v.k.LogitsScreenVerifyBF16
	if typ == gguf.TypeF16 {
		verify = v.k.LogitsScreenVerifyF16
	}
	ktMust(t, verify(pv, pi, exact, a, dc, lo, dw, dx, dnorm, xnorm, eps, int32(rows), int32(cols)))
	ktMust(t, v.k.ArgMaxFinal(out, 0, 0, pv, pi, int32(rows)))
	got := ktGet[int32](t, v, out, 1)[0]
	ex := ktGet[float32](t, v, exact, rows)
	cands := 0
	for i, e := range ex {
		if math.Float32bits(e) == ktNaN {
			continue
		}
		cands++
		if math.Float32bits(e) != math.Float32bits(logits[i]) && !(math.IsNaN(float64(e)) && math.IsNaN(float64(logits[i]))) {
			t.Fatalf("row %d: exact logit %v (%#x), the full kernel's %v (%#x)", i, e, math.Float32bits(e), logits[i], math.Float32bits(logits[i]))
		}
	}
	if got != want {
		t.Fatalf("screened argmax %d, full %d (%d candidates)", got, want, cands)
	}
	if all && cands != rows {
		t.Fatalf("%d candidates with every c infinite, want all %d rows", cands, rows)
	}
	if want >= 0 && math.Float32bits(ex[want]) == ktNaN {
		t.Fatalf("the winner %d was not a candidate", want)
	}

	// The top k, as screenedTopK selects it: each chunk's m largest lower
	// bounds, in order and led by the chunk's largest; the candidates'
	// exact logits and their top k.
	const K = kernels.TopKMax
	blocks := parts
	m := min(K, (2*K+blocks-1)/blocks) // memra_screen_top_m
	ptop := v.alloc(t, 4*blocks*m)
	lo2 := v.alloc(t, 4*parts)
	ktMust(t, v.k.LogitsScreenBound(lo2, ptop, a, dc, dx, dnorm, xnorm, eps, int32(rows), int32(cols)))
	los, pt := ktGet[float32](t, v, lo, parts), ktGet[float32](t, v, ptop, blocks*m)
	if a, b := ktGet[uint32](t, v, lo2, parts), ktGet[uint32](t, v, lo, parts); ktFirstDiff(a, b) >= 0 {
		t.Fatalf("the chunks' largest lower bounds differ with their m largest written: %v, %v", a, b)
	}
	for p := range blocks {
		q := pt[p*m : (p+1)*m]
		if q[0] != los[p] { // as floats: the two maxima may differ in a zero's sign
			t.Fatalf("chunk %d: largest of the m %v, the chunk's largest lower bound %v", p, q[0], los[p])
		}
		for i := 1; i < m; i++ {
			if !(q[i] <= q[i-1]) {
				t.Fatalf("chunk %d: the m largest lower bounds out of order at %d: %v", p, i, q)
			}
		}
	}
	// A poison no kernel writes (a NaN's payload), so that an unwritten
	// row reads as such even where the full logit is NaN.
	const unwritten = 0x7fc0beef
	outv := v.alloc(t, 4*rows)
	v.poison(t, outv, rows, unwritten)
	topv := v.k.LogitsScreenTopBF16
	if typ == gguf.TypeF16 {
		topv = v.k.LogitsScreenTopF16
	}
	// The top k as the kernel selects it, in its own launch's list, with
	// done zero before, as a cache leaves it; written twice, with the
	// exact logits and without, so that the second launch starts from the
	// done the first left.
	tb := screenTopBlocks(rows)
	list, done := v.alloc(t, 2*tb*K*4), v.alloc(t, 8)
	ktPut(t, v, done, []int32{0, 0})
	top1, top2 := v.alloc(t, 2*K*4), v.alloc(t, 2*K*4)
	v.poison(t, top1, 2*K, unwritten)
	v.poison(t, top2, 2*K, unwritten)
	// The list poisoned before each launch, so that a merge that read
	// the first launch's pairs where the second wrote its own would
	// show.
	v.poison(t, list, 2*tb*K, unwritten)
	ktMust(t, topv(top1, list, done, outv, a, dc, ptop, dw, dx, dnorm, xnorm, eps, int32(rows), int32(cols)))
	v.poison(t, list, 2*tb*K, unwritten)
	ktMust(t, topv(top2, list, done, 0, a, dc, ptop, dw, dx, dnorm, xnorm, eps, int32(rows), int32(cols)))
	if d := ktGet[int32](t, v, done, 2); d[0] != 0 || d[1] != 0 {
		t.Fatalf("top: done %v after the launches, want 0 0", d)
	}
	tops := ktGet[float32](t, v, outv, rows)
	tcands := 0
	for i, e := range tops {
		if math.Float32bits(e) == unwritten {
			t.Fatalf("top: row %d not written", i)
		}
		if math.IsInf(float64(e), -1) && !math.IsInf(float64(logits[i]), -1) {
			continue
		}
		tcands++
		if math.Float32bits(e) != math.Float32bits(logits[i]) && !(math.IsNaN(float64(e)) && math.IsNaN(float64(logits[i]))) {
			t.Fatalf("top: row %d: %v (%#x), the full kernel's %v (%#x)", i, e, math.Float32bits(e), logits[i], math.Float32bits(logits[i]))
		}
	}
	ids, vals := ktTopK(logits, K)
	for len(ids) < K { // fewer rows than k: empty places
		ids, vals = append(ids, -1), append(vals, 0)
	}
	for i, top := range []cuda.DevPtr{top1, top2} {
		gotV, gotI := ktGet[float32](t, v, top, K), ktGet[int32](t, v, top.Add(4*K), K)
		for j := range K {
			if gotI[j] != ids[j] || math.Float32bits(gotV[j]) != math.Float32bits(vals[j]) {
				t.Fatalf("top (launch %d): rank %d: (%d, %v %#x), the full logits' (%d, %v %#x) (%d candidates)", i+1, j, gotI[j], gotV[j],
					math.Float32bits(gotV[j]), ids[j], vals[j], math.Float32bits(vals[j]), tcands)
			}
		}
	}
	if all && tcands != rows {
		t.Fatalf("top: %d candidates with every c infinite, want all %d rows", tcands, rows)
	}
	// Where the rows and x' have finite bounds the screen must leave most
	// rows out (random rows: under 1% for the argmax, 1-7% for the top k in
	// run444), or a whole-vocabulary fallback would pass every check above.
	if screens && (cands > rows/10 || tcands > rows/10) {
		t.Fatalf("%d and %d (top) candidates of %d rows: the screen left too few out", cands, tcands, rows)
	}
	t.Logf("token %d, %d candidates of %d rows; top %d: %d candidates", got, cands, rows, K, tcands)
}

// TestGPUScreenedEqualsFull: graph generation of models whose logits
// matrix is screened (bf16 and f16, tied and not; 3,000 rows, whose copy
// takes the wide q8_0 kernel and lane-order scales, and 9,000) must give
// the same tokens as the model loaded with FullLogits: greedy (and
// eager's, which reads the full logits), and sampled from the device's
// top k; a session's DecodeTop must give the ids and values of the host's
// top k of the full logits. The screened greedy graph has its one more
// node and ScreenBytes its copy.
func TestGPUScreenedEqualsFull(t *testing.T) {
	e := decodeEngine(t)
	prompt := []int32{3, 141, 59, 26, 535}
	const n = 40
	for i, tc := range []struct {
		typ   gguf.Type
		tied  bool
		vocab int
	}{
		{gguf.TypeBF16, false, 3000},
		{gguf.TypeBF16, true, 9000},
		{gguf.TypeF16, false, 9000},
	} {
		t.Run(fmt.Sprintf("%s/tied=%v/%d", tc.typ, tc.tied, tc.vocab), func(t *testing.T) {
			spec := gpuTinySpec(tc.typ, tc.tied, uint64(40+i))
			spec.NVocab = tc.vocab
			m := modeltest.Load(t, spec)
			gen := func(g *Model, sm *Sampling) ([]int32, int) {
				gs := g.NewGraphDecodeState()
				defer gs.Close()
				if err := gs.SetSampling(sm); err != nil {
					t.Fatal(err)
				}
				toks, err := g.GenerateGraph(gs, prompt, n)
				if err != nil {
					t.Fatal(err)
				}
				return toks, gs.Nodes
			}
			scr := loadModel(t, e, m, Options{})
			full := loadModel(t, e, m, Options{FullLogits: true})
			if f, s := scr.ScreenBytes(); f == 0 || s == 0 || s >= f {
				t.Fatalf("ScreenBytes %d, %d: want the copy, smaller than the matrix", f, s)
			}
			if f, s := full.ScreenBytes(); f != 0 || s != 0 {
				t.Fatalf("FullLogits: ScreenBytes %d, %d, want none", f, s)
			}
			got, nodes := gen(scr, nil)
			want, fullNodes := gen(full, nil)
			if len(got) != n || len(want) != n {
				t.Fatalf("%d screened and %d full tokens, want %d", len(got), len(want), n)
			}
			if nodes != fullNodes+1 {
				t.Errorf("screened graph %d nodes, full %d: want one more", nodes, fullNodes)
			}
			if i := ktFirstDiff(got, want); i >= 0 {
				t.Fatalf("token %d: screened %d, full %d", i, got[i], want[i])
			}
			if i := ktFirstDiff(got, eagerStream(t, scr, prompt, n, nil)); i >= 0 {
				t.Fatalf("token %d: screened graph and eager differ", i)
			}

			// Hot draws from all of the top k, so that the ranks below the
			// first matter.
			sm := &Sampling{TopK: kernels.TopKMax, Temperature: 2, TopP: 1, Seed: uint64(60 + i)}
			greedy := got
			got, nodes = gen(scr, sm)
			want, fullNodes = gen(full, sm)
			if i := ktFirstDiff(got, want); i >= 0 {
				t.Fatalf("sampled token %d: screened %d, full %d", i, got[i], want[i])
			}
			// The copy's bound and top kernels in place of the logits' topk_select passes.
			passes := 1
			for k := tc.vocab; topKBlocks(k) > 1; k = topKBlocks(k) * kernels.TopKMax {
				passes++
			}
			if nodes != fullNodes+2-passes {
				t.Errorf("screened sampled graph %d nodes, full %d with %d top-k passes: want %d", nodes, fullNodes, passes, fullNodes+2-passes)
			}
			if slices.Equal(got, greedy) {
				t.Errorf("the sampled stream is the greedy one")
			}

			// DecodeTop along the sampled stream, against the host's top k
			// of a FullLogits session's logits.
			ss, err := scr.NewSession(len(got) + 1)
			if err != nil {
				t.Fatal(err)
			}
			defer ss.Close()
			fs, err := full.NewSession(len(got) + 1)
			if err != nil {
				t.Fatal(err)
			}
			defer fs.Close()
			for j, tok := range got {
				ids, vals, err := ss.DecodeTop(tok, kernels.TopKMax)
				if err != nil {
					t.Fatal(err)
				}
				logits, err := fs.DecodeStep(tok)
				if err != nil {
					t.Fatal(err)
				}
				wids, wvals := ktTopK(logits, kernels.TopKMax)
				for r := range wids {
					if ids[r] != wids[r] || math.Float32bits(vals[r]) != math.Float32bits(wvals[r]) {
						t.Fatalf("step %d, rank %d: DecodeTop (%d, %v), the full logits' (%d, %v)", j, r, ids[r], vals[r], wids[r], wvals[r])
					}
				}
			}
		})
	}
}

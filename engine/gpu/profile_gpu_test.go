package gpu

import (
	"fmt"
	"maps"
	"math"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// TestGPUProfileStep checks ProfileStep on the tiny qwen35 preset: the step
// it runs is a real decode step (the next eager step from its cache gives
// the same logits, bit for bit, as from a cache that took that step through
// DecodeStep), it reports every kernel the step launches (a device-counter
// graph's nodes less its argmax pair) by their spec names, none with a
// negative time (a tiny kernel may read 0 at the events' ~0.5 µs
// resolution) and the step's total positive.
func TestGPUProfileStep(t *testing.T) {
	e := decodeEngine(t)
	m := modeltest.Load(t, gpuTinySpec(gguf.TypeBF16, false, 11))
	g := loadModel(t, e, m, Options{})
	a, err := g.NewCache(64)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := g.NewCache(64)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	prompt := []int32{5, 900, 17, 333}
	for _, tk := range prompt[:3] {
		if _, err := g.DecodeStep(a, tk); err != nil {
			t.Fatal(err)
		}
		if _, err := g.DecodeStep(b, tk); err != nil {
			t.Fatal(err)
		}
	}
	launches, err := g.ProfileStep(a, prompt[3])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.DecodeStep(b, prompt[3]); err != nil {
		t.Fatal(err)
	}
	if a.Len() != b.Len() {
		t.Fatalf("cache lengths %d and %d after the profiled step", a.Len(), b.Len())
	}
	la, err := g.DecodeStep(a, 42)
	if err != nil {
		t.Fatal(err)
	}
	la = append([]float32(nil), la...)
	lb, err := g.DecodeStep(b, 42)
	if err != nil {
		t.Fatal(err)
	}
	for i := range la {
		if math.Float32bits(la[i]) != math.Float32bits(lb[i]) {
			t.Fatalf("logit %d after the profiled step: %v, after DecodeStep: %v", i, la[i], lb[i])
		}
	}

	gs := g.NewGraphDecodeState()
	defer gs.Close()
	if _, err := g.GenerateGraph(gs, prompt, 2); err != nil {
		t.Fatal(err)
	}
	if want := gs.Nodes - 2; len(launches) != want {
		t.Fatalf("%d launches profiled, want %d (graph nodes %d less argmax_partial, argmax_final)", len(launches), want, gs.Nodes)
	}
	t.Logf("%d launches, %.1f µs of kernel time", len(launches), checkLaunchTimes(t, launches)*1e6)
}

// TestGPUProfileGraphStep checks ProfileGraphStep on the tiny qwen35 preset
// with a screened bf16 logits matrix (vocab 3,000, screened as in
// TestGPUScreenedEqualsFull): the step it runs is the graph's
// device-counter step (a cache that took it and one that took DecodeStepDC
// go on alike: a device-counter step each, reading the token the first
// picked, then the same logits at an eager step, bit for bit), it launches
// as many kernels as a greedy graph has nodes, and its bytes are an eager
// step's at the same position but for the logits: the copy and its
// coefficients in place of the matrix (ScreenBytes).
func TestGPUProfileGraphStep(t *testing.T) {
	e := decodeEngine(t)
	spec := gpuTinySpec(gguf.TypeBF16, false, 14)
	spec.NVocab = 3000
	m := modeltest.Load(t, spec)
	g := loadModel(t, e, m, Options{})
	full, screened := g.ScreenBytes()
	if screened == 0 {
		t.Fatal("the bf16 logits matrix is not screened: the case no longer tests the screened step")
	}
	const n, tok = 5, 17
	var cs [3]*Cache
	for i := range cs {
		c, err := g.NewCache(64)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if err := c.FillSynthetic(n, tok, 3); err != nil {
			t.Fatal(err)
		}
		cs[i] = c
	}
	a, b, c := cs[0], cs[1], cs[2]
	launches, err := g.ProfileGraphStep(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.DecodeStepDC(b); err != nil {
		t.Fatal(err)
	}
	eager, err := g.ProfileStep(c, tok) // the token FillSynthetic left in the counters
	if err != nil {
		t.Fatal(err)
	}
	var logits [2][]float32
	for i, cc := range []*Cache{a, b} {
		if cc.Len() != n+1 {
			t.Fatalf("cache %d holds %d tokens after one step from %d", i, cc.Len(), n)
		}
		if err := g.DecodeStepDC(cc); err != nil {
			t.Fatalf("cache %d: a device-counter step after the first: %v", i, err)
		}
		l, err := g.DecodeStep(cc, 42)
		if err != nil {
			t.Fatal(err)
		}
		logits[i] = append([]float32(nil), l...)
	}
	for i := range logits[0] {
		if math.Float32bits(logits[0][i]) != math.Float32bits(logits[1][i]) {
			t.Fatalf("logit %d two steps after the profiled step: %v, after DecodeStepDC: %v", i, logits[0][i], logits[1][i])
		}
	}

	gs := g.NewGraphDecodeState()
	defer gs.Close()
	if _, err := g.GenerateGraph(gs, []int32{5, 900, 17}, 2); err != nil {
		t.Fatal(err)
	}
	if len(launches) != gs.Nodes {
		t.Fatalf("%d launches profiled, want the greedy graph's %d nodes", len(launches), gs.Nodes)
	}
	sum := func(ls []Launch) (w, c uint64) {
		for _, l := range ls {
			w, c = w+l.Weights, c+l.Cache
		}
		return w, c
	}
	gw, gc := sum(launches)
	ew, ec := sum(eager)
	if gw != ew-full+screened || gc != ec {
		t.Errorf("the graph step counts %d weight and %d cache bytes, want %d (eager %d − %d + %d) and %d", gw, gc, ew-full+screened, ew, full, screened, ec)
	}
	t.Logf("%d launches, %.1f µs of kernel time", len(launches), checkLaunchTimes(t, launches)*1e6)
}

// checkLaunchTimes checks a profile's launches: spec kernels, none with a
// negative time (a tiny kernel may read 0 at the events' ~0.5 µs
// resolution), a positive total, which it returns in seconds.
func checkLaunchTimes(t *testing.T, ls []Launch) float64 {
	t.Helper()
	names := map[string]bool{}
	for _, k := range kernels.Spec() {
		names[k.Name] = true
	}
	var sum float64
	for i, l := range ls {
		if !names[l.Kernel] {
			t.Fatalf("launch %d: kernel %q is not in kernels.Spec()", i, l.Kernel)
		}
		if l.Time < 0 {
			t.Fatalf("launch %d (%s): time %v", i, l.Kernel, l.Time)
		}
		sum += l.Time.Seconds()
	}
	if sum <= 0 {
		t.Fatalf("%d launches with no kernel time in total", len(ls))
	}
	return sum
}

// TestGPUProfileStepBytes checks the bytes ProfileStep says each launch
// moves against what the model and cache hold, counted here from the GGUF
// tensors and the config rather than from the step code: the weights add up
// to model.Model.WeightBytes (which counts one embedding row of an untied
// table; a tied one is read whole as the output and a row more by embed),
// the KV and state to one step's reads and writes (per attention layer the
// new K and V vectors written and pos+1 of each read; per DeltaNet layer its
// state and conv state read and written), each cache part on the kernel
// that moves it. Tied and untied, f16 and FP8 KV, and a mixed K-quant model
// (kMix), whose projections of one input take several launches (runs of
// one type, fusion.runs) that each read the norm weight.
func TestGPUProfileStepBytes(t *testing.T) {
	e := decodeEngine(t)
	for _, tc := range []struct {
		tied, fp8, mix bool
	}{{false, false, false}, {true, true, false}, {false, true, true}} {
		t.Run(fmt.Sprintf("tied=%v/fp8=%v/mix=%v", tc.tied, tc.fp8, tc.mix), func(t *testing.T) {
			spec := gpuTinySpec(gguf.TypeQ8_0, tc.tied, 13)
			if tc.mix {
				spec.Type = kMix
			}
			m := modeltest.Load(t, spec)
			g := loadModel(t, e, m, Options{KVFP8: tc.fp8})
			c, err := g.NewCache(64)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			const pos = 3
			for _, tk := range []int32{5, 900, 17} {
				if _, err := g.DecodeStep(c, tk); err != nil {
					t.Fatal(err)
				}
			}
			launches, err := g.ProfileStep(c, 333)
			if err != nil {
				t.Fatal(err)
			}
			cfg := m.Config
			wantW := uint64(m.WeightBytes())
			if cfg.TiedOutput {
				wantW += uint64(m.TokenEmbd.RowBytes())
			}
			// Every launch of a layer's mixer input past the first, and an
			// FFN pair not fused, reads the norm weight again.
			unfused := 0
			for _, L := range g.ls {
				extra := L.qkvAttn.n + L.gdnIn.n - 1
				if L.ffnGateUp.ptr == 0 {
					extra++
				}
				unfused += extra
				wantW += uint64(extra * cfg.NEmbd * 4)
			}
			if tc.mix && unfused == 0 {
				t.Fatal("the mixed model fused every projection: the case no longer tests unfused parts")
			}
			vec := uint64(cfg.HeadDimK * 2)
			if tc.fp8 {
				vec = uint64(cfg.HeadDimK + 4)
			}
			nAttn, nGDN := uint64(cfg.NumAttention()), uint64(cfg.NLayer-cfg.NumAttention())
			row := nAttn * uint64(cfg.NHeadKV) * 2 * vec // one position's K and V in every attention layer
			wantCache := map[string]uint64{              // by kernel family
				"gdn_delta": nGDN * 2 * uint64(cfg.SSMNumVHeads) * 128 * 128 * 4,
				"gdn_conv":  nGDN * 2 * uint64(cfg.SSMConvChannels()*(cfg.SSMConvKernel-1)) * 4,
			}
			if g.prepInSplit(g.BucketKey(pos + 1)) {
				wantCache["attn_prep_split"] = row * (pos + 2) // both, one launch over an f16 cache
			} else {
				wantCache["attn_prep"] = row              // the new position written
				wantCache["attn_split"] = row * (pos + 1) // every position read, the new one too
			}
			var gotW uint64
			gotCache := map[string]uint64{}
			for i, l := range launches {
				gotW += l.Weights
				if l.Cache > 0 {
					fam := l.Kernel
					for f := range wantCache { // the longest family the name opens with
						if strings.HasPrefix(l.Kernel, f) && (fam == l.Kernel || len(f) > len(fam)) {
							fam = f
						}
					}
					gotCache[fam] += l.Cache
				}
				if strings.HasPrefix(l.Kernel, "matvec_") && (l.Weights == 0 || !strings.Contains(l.Shape, "×")) {
					t.Errorf("launch %d (%s): shape %q, %d weight bytes", i, l.Kernel, l.Shape, l.Weights)
				}
			}
			if gotW != wantW {
				t.Errorf("a profiled step counts %d weight bytes, want %d", gotW, wantW)
			}
			if !maps.Equal(gotCache, wantCache) {
				t.Errorf("a profiled step's cache bytes by kernel %v, want %v", gotCache, wantCache)
			}
		})
	}
}

// TestGPUEarlyLoadsFollowNoWriter pins the launch order that lets kernels
// read before their wait what kernels two or more back wrote (kernels/gdn.cu,
// spec_test.go's earlyLoads): in a step of the tiny qwen35 preset,
// rmsnorm_gated (which reads the gate z early) follows gdn_delta, and
// gdn_delta_normed (sm_90's two in one, which reads z early too) follows
// gdn_conv, never the input projection that writes z; every gdn_conv
// follows a matvec (its conv state was written by itself, a step ago);
// attn_prep_split (which reads the step counter early) follows the q|k|v
// projection; and
// the step opens with embed,
// so no early reader of the step counter directly follows argmax_final,
// which advanced it at the end of the previous step.
func TestGPUEarlyLoadsFollowNoWriter(t *testing.T) {
	e := decodeEngine(t)
	m := modeltest.Load(t, gpuTinySpec(gguf.TypeBF16, false, 12))
	g := loadModel(t, e, m, Options{})
	c, err := g.NewCache(64)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := g.DecodeStep(c, 7); err != nil {
		t.Fatal(err)
	}
	launches, err := g.ProfileStep(c, 9)
	if err != nil {
		t.Fatal(err)
	}
	if len(launches) == 0 || !strings.HasPrefix(launches[0].Kernel, "embed_") {
		t.Fatalf("the step opens with %v, want an embed kernel", launches[:min(1, len(launches))])
	}
	seen := map[string]int{}
	for i, l := range launches[1:] {
		prev := launches[i].Kernel
		switch {
		case l.Kernel == "rmsnorm_gated" && prev != "gdn_delta":
			t.Errorf("launch %d: rmsnorm_gated follows %s, want gdn_delta", i+1, prev)
		case l.Kernel == "gdn_delta_normed" && prev != "gdn_conv":
			t.Errorf("launch %d: gdn_delta_normed follows %s, want gdn_conv", i+1, prev)
		case l.Kernel == "gdn_conv" && !strings.HasPrefix(prev, "matvec_"):
			t.Errorf("launch %d: gdn_conv follows %s, want the input projection", i+1, prev)
		case strings.HasPrefix(l.Kernel, "attn_prep_split_") && !strings.HasPrefix(prev, "matvec_"):
			t.Errorf("launch %d: %s follows %s, want the q|k|v projection", i+1, l.Kernel, prev)
		}
		seen[l.Kernel]++
	}
	norm := "rmsnorm_gated" // the gated norm's launch: its own before sm_90
	if g.hopper {
		norm = "gdn_delta_normed"
	}
	for _, k := range []string{"gdn_conv", norm} {
		if seen[k] == 0 {
			t.Errorf("no %s in the step: the tiny preset no longer has Gated DeltaNet layers", k)
		}
	}
	// The profiled step, at position 1, reads 2 keys.
	if k, want := fmt.Sprintf("attn_prep_split_f16_d%d", m.Config.HeadDimK), g.prepInSplit(g.BucketKey(2)); (seen[k] > 0) != want {
		t.Errorf("%d launches of %s in the step, where prepInSplit says %v", seen[k], k, want)
	}
}

// TestGPUProfilePrefill checks ProfilePrefill on a tiny q8_0 model with a
// prefill plan: the chunk it profiles is a real prefill chunk (after a
// first chunk from position 0 and a second of fewer tokens from 8, the
// states and the next step's logits are bit for bit a cache's that took
// the same 11 tokens one decode step per token), its launches are spec
// kernels with times ≥ 0 and a positive total, each batch matvec
// launch names its matrix and counts its weights once for the chunk's
// tokens, and the chunk's one embedding launch a row a token. Bad arguments are
// refused before anything runs: too many tokens for a chunk, none, a
// token outside the vocabulary, more than the cache holds.
func TestGPUProfilePrefill(t *testing.T) {
	e := decodeEngine(t)
	spec := gpuTinySpec(gguf.TypeQ8_0, false, 21)
	spec.NFF = 1536 // TestGPUPrefillMatchesTokenFeed's model
	m := modeltest.Load(t, spec)
	g := loadModel(t, e, m, Options{})
	if g.pf == nil {
		t.Fatal("no prefill plan")
	}
	prompt := testPrompt(g.pf.tokens+3, m.NVocab)
	cc, err := g.NewCache(len(prompt) + 4)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	for _, bad := range []struct {
		tokens []int32
		want   string
	}{
		{make([]int32, g.pf.tokens+1), "a chunk takes 1 to"},
		{nil, "a chunk takes 1 to"},
		{[]int32{1, int32(m.NVocab)}, "out of range"},
	} {
		if _, err := g.ProfilePrefill(cc, bad.tokens); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Fatalf("ProfilePrefill of %d tokens: %v, want an error with %q", len(bad.tokens), err, bad.want)
		}
	}
	if cc.Len() != 0 {
		t.Fatalf("a refused profile left %d tokens in the cache", cc.Len())
	}
	first, err := g.ProfilePrefill(cc, prompt[:g.pf.tokens])
	if err != nil {
		t.Fatal(err)
	}
	rest := prompt[g.pf.tokens:]
	launches, err := g.ProfilePrefill(cc, rest)
	if err != nil {
		t.Fatal(err)
	}
	if cc.Len() != len(prompt) {
		t.Fatalf("cache length %d after profiling %d tokens", cc.Len(), len(prompt))
	}
	checkSameCache(t, g, cc, primed(t, g, prompt, false))

	// The weights the chunk's launches count: every matrix once, whatever
	// the chunk's tokens (the logits are not part of a chunk; a q8_0
	// model's batch launches fuse no norm, so none adds its weight), and
	// one embedding launch of a row a token.
	want := uint64(0)
	for i := range g.ls {
		for _, w := range g.ls[i].matrices() {
			want += w.ggufBytes()
		}
	}
	for c, ls := range [][]Launch{first, launches} {
		checkLaunchTimes(t, ls)
		got, embeds := uint64(0), 0
		n := []int{g.pf.tokens, len(rest)}[c]
		for i, l := range ls {
			if strings.HasPrefix(l.Kernel, "embed_") {
				if l.Weights != uint64(n*g.tok.rowBytes()) || !strings.HasPrefix(l.Shape, "a row a token of") {
					t.Fatalf("launch %d (%s): shape %q, %d weight bytes, want %d rows of %d", i, l.Kernel, l.Shape, l.Weights, n, g.tok.rowBytes())
				}
				embeds++
				continue
			}
			if strings.HasPrefix(l.Kernel, "matvec_batch_q8_0") || strings.HasPrefix(l.Kernel, "matvec_batch_bf16") {
				if !strings.Contains(l.Shape, "×") || l.Weights == 0 {
					t.Fatalf("launch %d (%s): shape %q, %d weight bytes", i, l.Kernel, l.Shape, l.Weights)
				}
			}
			got += l.Weights
		}
		if got != want {
			t.Fatalf("the chunk's launches count %d weight bytes, the layers' matrices hold %d", got, want)
		}
		if embeds != 1 {
			t.Fatalf("chunk %d: %d embedding launches for its %d tokens, want one", c, embeds, n)
		}
	}
	n := cc.Len()
	if _, err := g.ProfilePrefill(cc, prompt[:5]); err == nil || !strings.Contains(err.Error(), "context full") {
		t.Fatalf("ProfilePrefill past the cache's capacity: %v", err)
	}
	if cc.Len() != n {
		t.Fatalf("a refused profile moved the cache from %d to %d tokens", n, cc.Len())
	}
	t.Logf("chunks of %d and %d tokens: %d and %d launches", g.pf.tokens, len(rest), len(first), len(launches))

	// A K-quant model's products of a normed input fuse the norm into
	// their inputs' stage: the stage launch counts the norm weight (it
	// reads it), the products their matrices only.
	km := modeltest.Load(t, func() modeltest.Spec { s := gpuTinySpec(gguf.TypeQ4_K, false, 22); s.Type = kMix; return s }())
	kg := loadModel(t, e, km, Options{})
	if kg.pf == nil {
		t.Fatal("K-quant mix: no prefill plan")
	}
	kc, err := kg.NewCache(kg.pf.tokens)
	if err != nil {
		t.Fatal(err)
	}
	defer kc.Close()
	ls, err := kg.ProfilePrefill(kc, testPrompt(kg.pf.tokens, km.NVocab))
	if err != nil {
		t.Fatal(err)
	}
	want, got := uint64(0), uint64(0)
	for i := range kg.ls {
		for _, w := range kg.ls[i].matrices() {
			want += w.ggufBytes()
		}
	}
	normed := 0
	for i, l := range ls {
		switch {
		case l.Kernel == "matvec_batch_norm" || l.Kernel == "matvec_batch_lay":
			if l.Weights != 0 {
				t.Fatalf("launch %d (%s): %d weight bytes, none noted", i, l.Kernel, l.Weights)
			}
		case l.Kernel == "matvec_batch_kq_stage":
			if l.Weights != 0 && l.Weights != uint64(4*km.NEmbd) {
				t.Fatalf("launch %d (%s): %d weight bytes, want 0 or a norm weight's %d", i, l.Kernel, l.Weights, 4*km.NEmbd)
			}
			if l.Weights != 0 {
				normed++
			}
		case strings.HasPrefix(l.Kernel, "matvec_batch_"):
			got += l.Weights
		}
	}
	if got != want || normed == 0 {
		t.Fatalf("K-quant mix: products count %d weight bytes (matrices %d), %d stages read a norm", got, want, normed)
	}
}

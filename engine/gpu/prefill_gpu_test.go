package gpu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/cuda"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/kernels"
)

// TestGPUPrefillMatchesTokenFeed: a prompt primed in chunks (prefill) must
// leave the cache that feeding it one decode step per token (feedSteps)
// leaves: the same Gated DeltaNet conv and delta states, bit for bit, and
// the same logits, bit for bit, from the next step, which reads every KV
// entry written. Every weight type with batch kernels, f16 and FP8 KV,
// chunks of the default length and of 13 (a batch launch's second pass
// short);
// n_ff = 1,536 puts the FFN's 3,072 paired rows on the plain f16/bf16
// kernels and q8_0's wave form, the rest on the wide ones; and a mix of
// types (mixedTypes) whose attention q|k and DeltaNet qkv|gate fuse and
// v, beta, alpha and the FFN gate and up do not: runs and parts launched
// at the fused buffers' strides,
// the parts' products over one matvec_batch_norm output, the per-token
// SwiGLU. Prompts of one partial chunk, of a chunk and a token, and of 77
// tokens in two calls (the second from position 5, as Session.Feed
// continues) crossing the 64-key bucket; with the tensor-core splits too;
// q8_0's launches staged and, with no room for copies, laid out
// (matvec_batch_lay), each on grids of 3 blocks.
// The K-quants: each type alone (its matrices fused as the step fuses
// them, on the wide kernels) and kMix's mixed types (Q4_K, Q5_K and Q6_K
// parts of one input beside a q8_0 one, which reads matvec_batch_norm's
// output where the K-quant launches' stage normalises), and recodeMix's
// (Q3_K, Q4_0 and Q5_0 beside the types Load stores them as: its staged
// inputs shared by parts recoded and not). Options.TokenFeed
// must fall back to token feed.
func TestGPUPrefillMatchesTokenFeed(t *testing.T) {
	e := decodeEngine(t)
	type typing struct {
		name string
		typ  func(string) gguf.Type
	}
	var typings []typing
	for _, typ := range []gguf.Type{gguf.TypeF32, gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ3_K, gguf.TypeIQ4_XS, gguf.TypeQ4_0, gguf.TypeIQ4_NL} {
		typings = append(typings, typing{typ.String(), func(string) gguf.Type { return typ }})
	}
	for _, ty := range append(typings, typing{"mixed", mixedTypes}, typing{"recoded", recodeMix}) {
		spec := gpuTinySpec(gguf.TypeQ8_0, false, 21)
		spec.NFF = 1536
		spec.Type = ty.typ
		m := modeltest.Load(t, spec)
		// Chunks of 13: each batch launch a full pass of 8 tokens and a
		// pass of 5 (4 in a prompt's last chunk of 12), both grid rows.
		for _, opt := range []Options{{}, {KVFP8: true}, {PrefillChunk: 13}, {KVFP8: true, PrefillChunk: 13}} {
			fp8 := opt.KVFP8
			g := loadModel(t, e, m, opt)
			typ := ty.name // a subtest's name: the type, and any chunk length not the default
			if g.pf == nil {
				t.Fatalf("%s: no prefill plan", typ)
			}
			if opt.PrefillChunk != 0 {
				typ = fmt.Sprintf("%s/chunk=%d", ty.name, g.pf.tokens)
			}
			for _, p := range []int{5, g.pf.tokens + 1, 77} {
				t.Run(fmt.Sprintf("%s/fp8=%v/P=%d", typ, fp8, p), func(t *testing.T) {
					checkPrefill(t, g, testPrompt(p, m.NVocab))
				})
			}
			if ty.name != gguf.TypeF32.String() && ty.name != gguf.TypeF16.String() && ty.name != gguf.TypeBF16.String() {
				// A tiny model's launches have fewer units than the GPU
				// has SMs, so none stages its inputs (prefillPlan.from);
				// with no SMs counted every q8_0 launch does, as the
				// presets' large ones do, and on grids of 3 blocks each
				// block's ring (the K-quants' too) streams across the
				// ends of its units.
				sms := g.pf.sms
				g.pf.sms = 0
				for i := range g.ls {
					for _, w := range g.ls[i].matrices() {
						if l, bk, _ := g.pf.launch(w); bk.Staged || bk.TensorCore {
							g.pf.blocks[l] = 3
						}
					}
				}
				t.Run(fmt.Sprintf("%s/fp8=%v/staged/P=77", typ, fp8), func(t *testing.T) {
					checkPrefill(t, g, testPrompt(77, m.NVocab))
				})
				// With no room for copies either, every q8_0 launch reads
				// its inputs laid out by matvec_batch_lay, as the 9B's
				// down projection does, on grids of 3 blocks.
				stageMax, laid := g.pf.stageMax, 0
				g.pf.stageMax = 0
				for i := range g.ls {
					for _, w := range g.ls[i].matrices() {
						if l, bk, _ := g.pf.launch(w); bk.Laid {
							g.pf.blocks[l] = 3
							laid++
						}
					}
				}
				switch {
				case laid > 0:
					t.Run(fmt.Sprintf("%s/fp8=%v/laid/P=77", typ, fp8), func(t *testing.T) {
						checkPrefill(t, g, testPrompt(77, m.NVocab))
					})
				case ty.name == gguf.TypeQ8_0.String():
					t.Fatalf("%s: no launch laid out with no room to stage", typ)
				} // the K-quant models have no q8_0 launch to lay out
				g.pf.sms, g.pf.stageMax = sms, stageMax
			}
		}
	}
	// The tensor-core splits (by default taken only at the split cap, past
	// 8k keys; MEMRA_ATTN_MMA=1 everywhere) have no chunk form: a chunk's
	// tokens launch them one by one before the chunk's combine.
	mma := modeltest.Load(t, gpuTinySpec(gguf.TypeBF16, false, 24))
	for _, fp8 := range []bool{false, true} {
		g := loadModel(t, e, mma, Options{KVFP8: fp8})
		g.attnMMA = mmaAll
		t.Run(fmt.Sprintf("mma/fp8=%v/P=77", fp8), func(t *testing.T) {
			prompt := make([]int32, 77)
			for i := range prompt {
				prompt[i] = int32((i*37 + 5) % mma.NVocab)
			}
			checkPrefill(t, g, prompt)
		})
	}
	mix := gpuTinySpec(gguf.TypeQ4_K, false, 22)
	mix.Type = kMix
	mixed := modeltest.Load(t, mix)
	for _, fp8 := range []bool{false, true} {
		g := loadModel(t, e, mixed, Options{KVFP8: fp8})
		if g.pf == nil {
			t.Fatal("K-quant mix: no prefill plan")
		}
		for _, p := range []int{5, 77} {
			t.Run(fmt.Sprintf("kmix/fp8=%v/P=%d", fp8, p), func(t *testing.T) {
				checkPrefill(t, g, testPrompt(p, mixed.NVocab))
			})
		}
		for l := range g.pf.blocks { // grids of 3 blocks: rings across the ends of units
			if bk, _ := batchKernel(l.v); bk.TensorCore {
				g.pf.blocks[l] = 3
			}
		}
		t.Run(fmt.Sprintf("kmix/fp8=%v/grids-of-3/P=77", fp8), func(t *testing.T) {
			checkPrefill(t, g, testPrompt(77, mixed.NVocab))
		})
	}
	if g := loadModel(t, e, modeltest.Load(t, gpuTinySpec(gguf.TypeBF16, false, 23)), Options{TokenFeed: true}); g.pf != nil {
		t.Error("Options.TokenFeed: prefill planned")
	}
}

// testPrompt is a prompt of p tokens spread over the vocabulary.
func testPrompt(p, vocab int) []int32 {
	prompt := make([]int32, p)
	for i := range prompt {
		prompt[i] = int32((i*131 + 17) % vocab)
	}
	return prompt
}

// checkPrefill primes prompt in chunks, their full ones replayed as
// graphs (chunkReplay), and one step per token, and compares the states
// and the next step's logits bit for bit.
func checkPrefill(t *testing.T, g *Model, prompt []int32) {
	t.Helper()
	checkSameCache(t, g, primed(t, g, prompt, true), primed(t, g, prompt, false))
}

// checkSameCache compares two caches that took the same tokens: their
// states and the logits of one more step on each, bit for bit.
func checkSameCache(t *testing.T, g *Model, got, want *Cache) {
	t.Helper()
	ktCheckBits(t, "conv states", deviceF32(t, g, got, true), deviceF32(t, g, want, true))
	ktCheckBits(t, "delta states", deviceF32(t, g, got, false), deviceF32(t, g, want, false))
	next := int32(3)
	a, err := g.DecodeStep(got, next)
	if err != nil {
		t.Fatal(err)
	}
	a = append([]float32(nil), a...)
	b, err := g.DecodeStep(want, next)
	if err != nil {
		t.Fatal(err)
	}
	ktCheckBits(t, "logits of the next step", a, b)
}

// mixedTypes types a model q8_0 but for bf16 attn_v, ffn_up and ssm_beta
// and f32 ssm_alpha: of the matrices that share an input only q|k and
// qkv|gate fuse, in runs of one type (fusion.runs).
func mixedTypes(name string) gguf.Type {
	switch {
	case strings.Contains(name, "attn_v."), strings.Contains(name, "ffn_up"), strings.Contains(name, "ssm_beta"):
		return gguf.TypeBF16
	case strings.Contains(name, "ssm_alpha"):
		return gguf.TypeF32
	}
	return gguf.TypeQ8_0
}

// primed returns a fresh cache with prompt fed, in chunks (the full ones
// replayed as graphs: chunkReplay) or one step per token; closed when the
// test ends. Prompts of more than 16 tokens go in two calls, the second
// from position 5.
func primed(t *testing.T, g *Model, prompt []int32, chunks bool) *Cache {
	t.Helper()
	cc, err := g.NewCache(len(prompt) + 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	if chunks && len(cc.ch.tok) < 2 {
		t.Fatalf("cache without a chunk (%d token views)", len(cc.ch.tok))
	}
	parts := [][]int32{prompt}
	if len(prompt) > 16 {
		parts = [][]int32{prompt[:5], prompt[5:]}
	}
	err = g.e.Do(func() error {
		from := 0
		for _, p := range parts {
			var err error
			if chunks {
				err = g.prefill(cc, p, from, true)
			} else {
				err = g.feedSteps(cc, p, from)
			}
			if err != nil {
				return err
			}
			from += len(p)
		}
		return g.e.Synchronize()
	})
	if err != nil {
		t.Fatal(err)
	}
	cc.n = len(prompt)
	return cc
}

// deviceF32 reads every Gated DeltaNet layer's conv states (conv) or delta
// states back, back to back.
func deviceF32(t *testing.T, g *Model, cc *Cache, conv bool) []float32 {
	t.Helper()
	c := &g.cfg
	var out []float32
	for _, l := range cc.gdn {
		p, n := l.state, c.SSMNumVHeads*kernels.GDNState*kernels.GDNState
		if conv {
			p, n = l.conv, c.SSMConvChannels()*(c.SSMConvKernel-1)
		}
		buf := make([]float32, n)
		if err := g.e.CopyDtoH(cuda.AsBytes(buf), p); err != nil {
			t.Fatal(err)
		}
		out = append(out, buf...)
	}
	return out
}

// TestGPUPrefillReplay primes prompts through chunk graphs (chunkReplay)
// and through eagerly launched chunks and compares the caches bit for bit:
// a prompt from position 5 straddles an attention bucket in one chunk (a
// second launch sequence, so a second graph), a continuation adds chunks
// at other positions (nodes updated in place), and a Reset cache primes
// again on the graphs it has, capturing none. Options.EagerChunks makes
// none.
func TestGPUPrefillReplay(t *testing.T) {
	e := decodeEngine(t)
	for _, typ := range []gguf.Type{gguf.TypeBF16, gguf.TypeQ4_K} {
		m := modeltest.Load(t, gpuTinySpec(typ, false, 25))
		for _, fp8 := range []bool{false, true} {
			g := loadModel(t, e, m, Options{KVFP8: fp8})
			t.Run(fmt.Sprintf("%s/fp8=%v", typ, fp8), func(t *testing.T) {
				prompt := testPrompt(120, m.NVocab)
				parts := [][]int32{prompt[:5], prompt[5:77], prompt[77:]}
				prime := func(cc *Cache, replay bool) {
					t.Helper()
					err := e.Do(func() error {
						from := 0
						for _, p := range parts {
							if err := g.prefill(cc, p, from, replay); err != nil {
								return err
							}
							from += len(p)
						}
						return e.Synchronize()
					})
					if err != nil {
						t.Fatal(err)
					}
					cc.n = len(prompt)
				}
				newCache := func() *Cache {
					cc, err := g.NewCache(len(prompt) + 4)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { cc.Close() })
					return cc
				}
				eager, replayed := newCache(), newCache()
				prime(eager, false)
				prime(replayed, true)
				if eager.ch.replays != nil {
					t.Fatalf("eager chunks made %d graphs", eager.ch.replays.Len())
				}
				graphs, updates := replayed.ch.replays.Len(), replayed.ch.replays.Updates()
				// 14 full chunks from position 5: one straddles keys 64 and 65.
				if graphs != 2 || updates == 0 {
					// Which graph each full chunk's launches match, and why not the others.
					var rec cuda.Recording
					for from := 5; from+g.pf.tokens <= len(prompt); from += g.pf.tokens {
						err := e.RecordLaunches(&rec, func() error { return g.prefillChunk(replayed, prompt[from:from+g.pf.tokens], from) })
						if err != nil {
							t.Fatal(err)
						}
						for k, p := range replayed.ch.replays.Replays() {
							t.Logf("chunk at %d, graph %d: %v", from, k, p.Mismatch(&rec))
						}
					}
					t.Fatalf("%d chunk graphs, %d node updates: want 2 graphs, updated", graphs, updates)
				}
				checkSameCache(t, g, replayed, eager)
				if err := replayed.Reset(); err != nil {
					t.Fatal(err)
				}
				again := newCache()
				prime(again, false)
				prime(replayed, true)
				if replayed.ch.replays.Len() != graphs {
					t.Fatalf("after Reset %d chunk graphs, want the %d there were", replayed.ch.replays.Len(), graphs)
				}
				checkSameCache(t, g, replayed, again)
			})
		}
		g := loadModel(t, e, m, Options{EagerChunks: true})
		cc, err := g.NewCache(64)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		if err := e.Do(func() error { return g.prefill(cc, testPrompt(40, m.NVocab), 0, true) }); err != nil {
			t.Fatal(err)
		}
		if cc.ch.replays != nil {
			t.Errorf("%s: Options.EagerChunks made %d chunk graphs", typ, cc.ch.replays.Len())
		}
	}
}

package cpu

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/model"
)

// TestNewCacheChecksMemory: a cache larger than the memory available (here
// 2.2 TB of K and V) is an error naming both sizes, where the allocation
// would end the process; a count past the model's context is one too.
func TestNewCacheChecksMemory(t *testing.T) {
	if availableMemory() == 0 {
		t.Skip("no MemAvailable in /proc/meminfo")
	}
	cfg := &model.Config{Arch: model.ArchQwen35, NLayer: 1, Kinds: []model.LayerKind{model.LayerAttention},
		NEmbd: 64, NFF: 128, NVocab: 512, NHead: 64, NRot: 64, NormEps: 1e-6, RopeBase: 1e7,
		NHeadKV: 64, HeadDimK: 256, HeadDimV: 256}
	if got, want := cacheBytes(cfg, model.MaxContext), uint64(4*64*512)*model.MaxContext; got != want {
		t.Fatalf("cacheBytes = %d, want %d", got, want)
	}
	// 4·64·512·2^24 bytes = 2199.0 GB.
	_, err := NewCache(cfg, model.MaxContext)
	if err == nil || !strings.Contains(err.Error(), "cache for 16777216 tokens: 2199.0 GB, more than the ") ||
		!strings.Contains(err.Error(), "GB of memory available: lower the context") {
		t.Errorf("NewCache(%d): %v; want the memory error", model.MaxContext, err)
	} else {
		// The memory available, in GB, as the error was made; it moves a
		// little between the two reads, not by a factor.
		var gb float64
		_, rest, _ := strings.Cut(err.Error(), "more than the ")
		if _, serr := fmt.Sscanf(rest, "%g GB", &gb); serr != nil || math.Abs(gb-float64(availableMemory())/1e9) > 0.2*gb+0.1 {
			t.Errorf("%v: available %g GB (%v), /proc/meminfo says %.1f", err, gb, serr, float64(availableMemory())/1e9)
		}
	}
	// The backend's scratch counts with the cache.
	if _, err := newCache(cfg, 1, 1<<62); err == nil || !strings.Contains(err.Error(), "cache and scratch for 1 tokens") {
		t.Errorf("newCache with 4 EB of scratch: %v", err)
	}
	cfg.ContextLength = 1000
	if _, err := NewCache(cfg, 1001); err == nil || !strings.Contains(err.Error(), "past the model's context length 1000 (qwen35.context_length)") {
		t.Errorf("NewCache past context_length: %v", err)
	}
}

// TestScratchOfAbsentKinds: a model without attention layers sizes no
// attention scratch from its (unchecked) attention keys, nor one without
// recurrent layers any Gated DeltaNet scratch from its SSM keys.
func TestScratchOfAbsentKinds(t *testing.T) {
	rec := &model.Config{Arch: model.ArchQwen35, NLayer: 2, Kinds: []model.LayerKind{model.LayerRecurrent, model.LayerRecurrent},
		NEmbd: 64, NFF: 128, NVocab: 512, NRot: 16, NHead: model.MaxDim, NHeadKV: 1, HeadDimK: 32, HeadDimV: 32,
		SSMConvKernel: 4, SSMStateSize: 16, SSMGroupCount: 2, SSMNumVHeads: 4, SSMInnerSize: 64, SSMHeadDimV: 16}
	s := scratchFor(rec, 1024)
	if s.qg+s.q+s.k+s.v+s.att+s.scores+s.rot != 0 || s.conv != rec.SSMConvChannels() || s.inner != 64 {
		t.Errorf("all recurrent: %+v", s)
	}
	att := *rec
	att.Kinds = []model.LayerKind{model.LayerAttention, model.LayerAttention}
	att.NHead, att.AttnOutputGate = 4, true
	att.SSMStateSize, att.SSMGroupCount, att.SSMNumVHeads, att.SSMInnerSize = model.MaxDim, model.MaxDim, model.MaxDim, model.MaxDim
	s = scratchFor(&att, 1024)
	if s.conv+s.inner+s.vHeads != 0 || s.scores != 4*1024 || s.qg != 2*4*32 {
		t.Errorf("all attention: %+v", s)
	}
	if got, want := s.bytes(), uint64(4*(3*64+256+128+32+32+128+4096+16+256+512)); got != want {
		t.Errorf("bytes %d, want %d", got, want)
	}
}

// TestCacheShapes: NewCache allocates exactly the documented sizes per layer
// kind (K, V [capacity][n_kv·Dh]; conv [C][K−1]; state [H_v][Sv][Sk]), and
// cacheBytes counts exactly them. Config: C = 2·2·16 + 64 = 128 channels,
// kernel 4; H_v 4 × Sv 16 × Sk 16 = 1,024 state; 2 KV heads × 32 = 64 per
// row, 10 rows.
func TestCacheShapes(t *testing.T) {
	cfg := &model.Config{Arch: model.ArchQwen35, NLayer: 2, Kinds: []model.LayerKind{model.LayerRecurrent, model.LayerAttention},
		NEmbd: 64, NFF: 128, NVocab: 512, NHead: 4, NRot: 16, NormEps: 1e-6, RopeBase: 1e7,
		NHeadKV: 2, HeadDimK: 32, HeadDimV: 32,
		SSMConvKernel: 4, SSMStateSize: 16, SSMGroupCount: 2, SSMNumVHeads: 4, SSMInnerSize: 64, SSMHeadDimV: 16}
	c, err := NewCache(cfg, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Conv[0]) != 128*3 || len(c.State[0]) != 1024 || c.K[0] != nil || c.V[0] != nil {
		t.Errorf("recurrent layer: conv %d state %d K %d V %d, want 384, 1024, nil, nil", len(c.Conv[0]), len(c.State[0]), len(c.K[0]), len(c.V[0]))
	}
	if len(c.K[1]) != 640 || len(c.V[1]) != 640 || c.Conv[1] != nil || c.State[1] != nil {
		t.Errorf("attention layer: K %d V %d conv %d state %d, want 640, 640, nil, nil", len(c.K[1]), len(c.V[1]), len(c.Conv[1]), len(c.State[1]))
	}
	if got, want := cacheBytes(cfg, 10), uint64(4*(384+1024+640+640)); got != want {
		t.Errorf("cacheBytes %d, want %d", got, want)
	}
	// The recurrent scratch: 3 × embd 64, conv and qkv 2 × 128, z and o
	// 2 × 64, beta and alpha 2 × 4, FFN 2 × 128, vocab 512; all-recurrent,
	// so no attention buffers.
	rec := *cfg
	rec.Kinds = []model.LayerKind{model.LayerRecurrent, model.LayerRecurrent}
	rec.NEmbd, rec.NFF, rec.NVocab = 64, 128, 512
	if got, want := scratchFor(&rec, 10).bytes(), uint64(4*(3*64+2*128+2*64+2*4+2*128+512)); got != want {
		t.Errorf("recurrent scratch bytes %d, want %d", got, want)
	}
	for _, n := range []int{0, -1} {
		if _, err := NewCache(cfg, n); err == nil || !strings.Contains(err.Error(), "must be positive") {
			t.Errorf("NewCache(%d): %v, want must be positive", n, err)
		}
	}
	// A Config made by hand that no file gives is refused before anything
	// is sized from it (a kind past the layer count indexed out of range;
	// a negative head count wrapped into an exabyte "out of memory").
	// Past MaxDim too, as Load refuses a file's keys: (K−1)·C·4 bytes of
	// conv state for K = 2^61 wrapped uint64 to a size that looked affordable.
	for _, tc := range []struct {
		name string
		edit func(*model.Config)
		want string
	}{
		{"3 kinds for 2 layers", func(c *model.Config) {
			c.Kinds = []model.LayerKind{model.LayerAttention, model.LayerAttention, model.LayerAttention}
		}, "3 layer kinds for 2 main layers"},
		{"NHeadKV -1", func(c *model.Config) { c.NHeadKV = -1 }, "head_count_kv -1"},
		{"inner size 65 for 4 heads of 16", func(c *model.Config) { c.SSMInnerSize = 65 }, "Gated DeltaNet dims"},
		{"conv kernel 2^61", func(c *model.Config) { c.SSMConvKernel = 1 << 61 }, "ssm.conv_kernel 2305843009213693952 is more than 16777216"},
		{"NEmbd 0", func(c *model.Config) { c.NEmbd = 0 }, "embedding_length 0 must be positive"},
	} {
		bad := *cfg
		tc.edit(&bad)
		if _, err := NewCache(&bad, 10); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestMemAvailable: MemAvailable is read in kB and only in kB.
func TestMemAvailable(t *testing.T) {
	for _, tc := range []struct {
		text string
		want uint64
	}{
		{"MemTotal:       32768 kB\nMemFree:         1024 kB\nMemAvailable:   16384 kB\nBuffers: 1 kB\n", 16384 * 1024},
		{"MemAvailable: 7 kB", 7168},
		{"MemFree: 1024 kB\n", 0},           // absent
		{"MemAvailable:   16384 MB\n", 0},   // not kB
		{"MemAvailable:   16384\n", 0},      // no unit
		{"MemAvailable:   16384 kB x\n", 0}, // a field too many
		{"MemAvailable:   -5 kB\n", 0},      // not a count
		{" MemAvailable: 5 kB\n", 0},        // not the key
	} {
		if got := memAvailable([]byte(tc.text)); got != tc.want {
			t.Errorf("memAvailable(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

// TestNewRefusesHandMadeModel: New takes only a Model from model.Load,
// whose tensors Load checked; an empty one made by hand was a nil
// dereference inside New.
func TestNewRefusesHandMadeModel(t *testing.T) {
	b, err := New(&model.Model{}, Options{})
	if err == nil || !strings.Contains(err.Error(), "not made by model.Load") {
		t.Errorf("New(&model.Model{}): %v, %v; want it refused", b, err)
	}
}

package cpu

import (
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
		NHeadKV: 64, HeadDimK: 256, HeadDimV: 256}
	if got, want := cacheBytes(cfg, model.MaxContext), uint64(4*64*512)*model.MaxContext; got != want {
		t.Fatalf("cacheBytes = %d, want %d", got, want)
	}
	_, err := NewCache(cfg, model.MaxContext)
	if err == nil || !strings.Contains(err.Error(), "GB of memory available: lower the context") {
		t.Errorf("NewCache(%d): %v; want the memory error", model.MaxContext, err)
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

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
	cfg.ContextLength = 1000
	if _, err := NewCache(cfg, 1001); err == nil || !strings.Contains(err.Error(), "past the model's context length 1000 (qwen35.context_length)") {
		t.Errorf("NewCache past context_length: %v", err)
	}
}

package cpu

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/memra-ai/memra/engine/model"
)

// Cache is the per-sequence state of the CPU backend, all f32:
//   - attention layers: K and V, [capacity][n_kv·Dh] each (positions in order);
//   - Gated DeltaNet layers: conv state [C][conv_kernel−1] (the last inputs,
//     oldest first) and recurrent state [H_v][Sv][Sk].
//
// Slices of the other layer kind are nil. Recurrent state does not grow with
// the sequence; only the KV cache bounds Capacity.
type Cache struct {
	K, V  [][]float32 // per layer: [capacity][n_kv·Dh], nil for recurrent layers
	Conv  [][]float32 // per layer: [C][conv_kernel−1], nil for attention layers
	State [][]float32 // per layer: [H_v][Sv][Sk], nil for attention layers

	n, capacity int
}

// NewCache allocates the cache of cfg for at most capacity tokens.
func NewCache(cfg *model.Config, capacity int) (*Cache, error) {
	return newCache(cfg, capacity, 0)
}

// newCache is NewCache checking, before it allocates, that the cache and
// extra bytes more (the backend's scratch) fit the memory available.
func newCache(cfg *model.Config, capacity int, extra uint64) (*Cache, error) {
	if err := cfg.Check(); err != nil { // a Config made by hand is sized from below
		return nil, fmt.Errorf("cache: %w", err)
	}
	if capacity <= 0 {
		return nil, fmt.Errorf("cache capacity %d: must be positive", capacity)
	}
	if err := cfg.CheckContext(capacity); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	what := fmt.Sprintf("cache for %d tokens", capacity)
	if extra > 0 {
		what = fmt.Sprintf("cache and scratch for %d tokens", capacity)
	}
	if err := checkMemory(what, cacheBytes(cfg, capacity)+extra); err != nil {
		return nil, err
	}
	c := &Cache{
		K: make([][]float32, cfg.NLayer), V: make([][]float32, cfg.NLayer),
		Conv: make([][]float32, cfg.NLayer), State: make([][]float32, cfg.NLayer),
		capacity: capacity,
	}
	kvRow := cfg.NHeadKV * cfg.HeadDimK
	for i, kind := range cfg.Kinds {
		switch kind {
		case model.LayerAttention:
			c.K[i] = make([]float32, capacity*kvRow)
			c.V[i] = make([]float32, capacity*cfg.NHeadKV*cfg.HeadDimV)
		case model.LayerRecurrent:
			c.Conv[i] = make([]float32, cfg.SSMConvChannels()*(cfg.SSMConvKernel-1))
			c.State[i] = make([]float32, cfg.SSMNumVHeads*cfg.SSMHeadDimV*cfg.SSMStateSize)
		}
	}
	return c, nil
}

// Len returns the number of tokens in the cache (the next token's position).
func (c *Cache) Len() int { return c.n }

// Capacity returns the most tokens the cache holds.
func (c *Cache) Capacity() int { return c.capacity }

// Reset empties the cache: length 0 and zero recurrent and conv state (KV
// rows past Len are never read, so they are left as they are).
func (c *Cache) Reset() {
	c.n = 0
	for i := range c.Conv {
		clear(c.Conv[i])
		clear(c.State[i])
	}
}

// checkRoom returns an error when one more token does not fit.
func (c *Cache) checkRoom() error {
	if c.n >= c.capacity {
		return fmt.Errorf("context full: %d tokens, capacity %d", c.n, c.capacity)
	}
	return nil
}

// cacheBytes is what NewCache allocates for capacity tokens: f32 K and V
// rows of the attention layers, conv and state of the recurrent ones.
func cacheBytes(cfg *model.Config, capacity int) uint64 {
	var n uint64
	for _, kind := range cfg.Kinds {
		switch kind {
		case model.LayerAttention:
			n += uint64(capacity) * uint64(cfg.NHeadKV*(cfg.HeadDimK+cfg.HeadDimV))
		case model.LayerRecurrent:
			n += uint64(cfg.SSMConvChannels()*(cfg.SSMConvKernel-1) + cfg.SSMNumVHeads*cfg.SSMHeadDimV*cfg.SSMStateSize)
		}
	}
	return 4 * n
}

// checkMemory refuses need bytes of what (a cache, or a cache with the
// backend's scratch) past the memory available.
func checkMemory(what string, need uint64) error {
	if avail := availableMemory(); avail > 0 && need > avail {
		return fmt.Errorf("%s: %.1f GB, more than the %.1f GB of memory available: lower the context",
			what, float64(need)/1e9, float64(avail)/1e9)
	}
	return nil
}

// availableMemory is the kernel's estimate of the memory a process can
// take without swapping (MemAvailable in /proc/meminfo), or 0 where there
// is none: Go cannot recover from an allocation that fails, so the cache is
// checked against it first.
func availableMemory() uint64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	return memAvailable(b)
}

// memAvailable parses MemAvailable out of /proc/meminfo's text, 0 where it
// is absent or not in kB.
func memAvailable(meminfo []byte) uint64 {
	for _, line := range strings.Split(string(meminfo), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemAvailable:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseUint(f[0], 10, 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}

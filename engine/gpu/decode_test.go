package gpu

import (
	"math"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/model"
)

// TestGraphTokenCountChecked: GenerateGraph and ContinueGraph refuse a
// negative token count, and a count whose sum with the cache length wraps
// in int, with an error before anything reaches the device (the model here
// has no engine: a call that got that far would panic). A negative n used
// to size GenerateGraph's cache below its prompt, whose last steps then ran
// past the KV rows, and then panic in make; a wrapping n passed the
// capacity check and replayed past the cache.
func TestGraphTokenCountChecked(t *testing.T) {
	g := &Model{cfg: model.Config{NVocab: 8}}
	gs := g.NewGraphDecodeState()
	if _, err := g.GenerateGraph(gs, []int32{1, 2, 3}, -1); err == nil || !strings.Contains(err.Error(), "-1 tokens") {
		t.Errorf("GenerateGraph of -1 tokens: %v", err)
	}
	if _, err := g.GenerateGraph(gs, []int32{1, 2, 3}, math.MaxInt-1); err == nil || !strings.Contains(err.Error(), "exceed") {
		t.Errorf("GenerateGraph of MaxInt-1 tokens: %v", err)
	}
	gs.cache = &Cache{g: g, arena: nil, n: 5, capacity: 8}
	if _, err := g.ContinueGraph(gs, -1); err == nil || !strings.Contains(err.Error(), "-1 tokens") {
		t.Errorf("ContinueGraph of -1 tokens: %v", err)
	}
	if _, err := g.ContinueGraph(gs, math.MaxInt); err == nil || !strings.Contains(err.Error(), "context full") {
		t.Errorf("ContinueGraph of MaxInt tokens at 5 of 8: %v", err)
	}
	if out, err := g.ContinueGraph(gs, 0); err != nil || len(out) != 0 {
		t.Errorf("ContinueGraph of 0 tokens: %v, %v", out, err)
	}
}

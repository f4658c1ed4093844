package gpu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/memra-ai/memra/engine/sample"
	"github.com/memra-ai/memra/kernels"
)

// Sampling is top-k sampling drawn on the device (kernels/draw.cu): graph
// generation with it picks each token from the step's top k with the
// temperature, top-p and min-p, as sample.Sampler.SampleTop does for the
// same options and seed, bit for bit (the device repeats the host's
// arithmetic; TestGPUGraphSampledEqualsSession), and the token feeds the
// next step on the device as argmax's does.
type Sampling struct {
	TopK        int     // 1 … kernels.TopKMax (and at most the vocabulary)
	Temperature float32 // > 0 and finite (sample.Options.Validate's bound; 0, greedy, is argmax's graph)
	TopP        float32 // in [0, 1]; applied when in (0, 1)
	MinP        float32 // in [0, 1]; applied when > 0
	Seed        uint64  // the i-th token drawn takes sample.Uniform(Seed, i)
}

// MaxTop is the largest k the device selects the top k for (DecodeTop,
// Sampling): kernels.TopKMax, or the vocabulary if smaller.
func (g *Model) MaxTop() int { return maxTop(g.cfg.NVocab) }

func maxTop(nVocab int) int { return min(kernels.TopKMax, nVocab) }

// check reports why s cannot be drawn for a vocabulary of nVocab tokens.
func (s *Sampling) check(nVocab int) error {
	switch top := maxTop(nVocab); {
	case s.TopK < 1 || s.TopK > top:
		return fmt.Errorf("gpu: sampling: top-k %d: the device draws from 1 to %d", s.TopK, top)
	case !(s.Temperature > 0) || math.IsInf(float64(s.Temperature), 1):
		return fmt.Errorf("gpu: sampling: temperature %g: must be > 0 and finite", s.Temperature)
	case !(s.TopP >= 0 && s.TopP <= 1):
		return fmt.Errorf("gpu: sampling: top-p %g: must be in [0, 1]", s.TopP)
	case !(s.MinP >= 0 && s.MinP <= 1):
		return fmt.Errorf("gpu: sampling: min-p %g: must be in [0, 1]", s.MinP)
	}
	return nil
}

// params is struct memra_draw for draw index (the tokens drawn so far).
func (s *Sampling) params(index uint64) []byte {
	b := make([]byte, kernels.DrawParamsBytes)
	le := binary.LittleEndian
	le.PutUint64(b[kernels.DrawSeed:], s.Seed)
	le.PutUint64(b[kernels.DrawIndex:], index)
	le.PutUint32(b[kernels.DrawK:], uint32(int32(s.TopK)))
	le.PutUint32(b[kernels.DrawTemperature:], math.Float32bits(s.Temperature))
	le.PutUint32(b[kernels.DrawTopP:], math.Float32bits(s.TopP))
	le.PutUint32(b[kernels.DrawMinP:], math.Float32bits(s.MinP))
	return b
}

// Penalty is the repetition penalty applied on the device
// (kernels/penalty.cu) before the token is picked, by argmax or the draw:
// sample.Penalize's rule, every distinct token among the last Window of the
// history (the prompt, then each token generated) has its logit divided by
// Penalty when positive, else multiplied, in the same float32 operation.
type Penalty struct {
	Penalty float32 // sample.MinRepeatPenalty … sample.MaxRepeatPenalty (1: no change)
	Window  int     // 1 … kernels.PenaltyMaxWindow
}

func (p *Penalty) check() error {
	switch {
	case !(p.Penalty >= sample.MinRepeatPenalty && p.Penalty <= sample.MaxRepeatPenalty):
		return fmt.Errorf("gpu: repetition penalty %g: want [%g, %g] (sample.Options' bounds)", p.Penalty, sample.MinRepeatPenalty, sample.MaxRepeatPenalty)
	case p.Window < 1 || p.Window > kernels.PenaltyMaxWindow:
		return fmt.Errorf("gpu: repetition window %d: the device keeps 1 to %d tokens", p.Window, kernels.PenaltyMaxWindow)
	}
	return nil
}

// state is struct memra_penalty with history's last Window tokens in its
// ring (token j of history at j % Window) and no stamp used.
func (p *Penalty) state(history []int32) []byte {
	b := make([]byte, kernels.PenaltyBytes)
	le := binary.LittleEndian
	le.PutUint32(b[kernels.PenaltyPenalty:], math.Float32bits(p.Penalty))
	le.PutUint32(b[kernels.PenaltyWindow:], uint32(p.Window))
	le.PutUint64(b[kernels.PenaltyN:], uint64(len(history)))
	for j := max(0, len(history)-p.Window); j < len(history); j++ {
		le.PutUint32(b[kernels.PenaltyRing+4*(j%p.Window):], uint32(history[j]))
	}
	return b
}

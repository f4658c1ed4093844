// Package sample turns logits into tokens: greedy decoding and sampling with
// temperature, top-k, top-p, min-p and a repetition penalty, seeded for
// reproducibility, plus Generate, the token loop shared by every backend.
package sample

import (
	"container/heap"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/memra-ai/memra/engine/model"
)

// Options configures token selection. The zero value is greedy decoding.
// The filters run in transformers' order (Filter): the repetition penalty,
// top-k, the temperature, then top-p and min-p on the tempered
// probabilities. llama.cpp's default chain applies the temperature last, so
// its top-p and min-p see the probabilities at temperature 1: the same
// values keep fewer tokens here than there below a temperature of 1 (the
// CLI's default 0.8), more above it.
type Options struct {
	// Temperature divides the logits before the softmax; 0 (or Greedy)
	// means argmax.
	Temperature float32
	// Greedy forces argmax whatever the other fields say.
	Greedy bool
	// TopK keeps the k most likely tokens, exactly k: a tie at the k-th
	// place goes to the lower ids, where transformers keeps every tie (0 or
	// at least the vocabulary: all).
	TopK int
	// TopP keeps the smallest set of most likely tokens whose probability
	// sums to at least TopP, the token that reaches it included (0 or 1:
	// all; at 0 llama.cpp and transformers keep the most likely alone).
	TopP float32
	// MinP drops tokens whose probability is below MinP × the top
	// probability, both at the temperature (0: none).
	MinP float32
	// RepeatPenalty (> 1 discourages) applies to every distinct token among
	// the last RepeatWindow of the history: a positive logit is divided by
	// it, a negative one multiplied (as llama.cpp and transformers do).
	// 0 or 1: off; otherwise within [MinRepeatPenalty, MaxRepeatPenalty].
	RepeatPenalty float32
	// RepeatWindow is how many recent tokens the penalty looks at
	// (0: 64).
	RepeatWindow int
	// Seed makes sampling deterministic: the i-th token a Sampler picks
	// draws Uniform(Seed, i), on the host or on the GPU alike.
	Seed uint64
	// Stop ends generation after any of these tokens is produced (the stop
	// token is returned and emitted).
	Stop []int32
}

// DefaultRepeatWindow is the repetition window when Options.RepeatWindow is 0.
const DefaultRepeatWindow = 64

// The sampling that memra run uses unless told otherwise (llama.cpp's
// default values, though not its order of filters: Options), and that
// bench's sampled rows time.
const (
	DefaultTopK        = 40
	DefaultTemperature = 0.8
	DefaultTopP        = 0.95
	DefaultMinP        = 0.05
)

// The repetition penalty's bounds. Past them a penalised logit can leave
// float32's range (1e-45 made a logit of 3 +Inf, and the softmax NaN, which
// drew the least likely candidate); within them any logit below 3.4e36 in
// magnitude stays finite. Useful penalties are near 1 (llama.cpp's
// examples use 1.0-1.5).
const (
	MinRepeatPenalty float32 = 0.01
	MaxRepeatPenalty float32 = 100
)

// Argmax returns the index of the largest element (the first on ties;
// NaNs are never chosen unless every element is NaN, then 0): greedy
// decoding's token, the one every backend's argmax is held to.
func Argmax(x []float32) int {
	best := -1
	for i, v := range x {
		if v != v {
			continue
		}
		if best < 0 || v > x[best] {
			best = i
		}
	}
	return max(best, 0)
}

// IsGreedy reports whether o picks the argmax: Greedy, or a temperature of 0.
func (o *Options) IsGreedy() bool { return o.Greedy || o.Temperature <= 0 }

// PenaltyOn reports whether a repetition penalty p changes logits (0 and 1
// are off).
func PenaltyOn(p float32) bool { return p != 0 && p != 1 }

// OptionError is Validate's error: the option out of range, named in
// words ("temperature", "top-k", "top-p", "min-p", "repeat penalty",
// "repeat window"; a CLI may rename it to its flag), its value and the
// range it must be in.
type OptionError struct {
	Option string
	Value  any
	Want   string
}

func (e *OptionError) Error() string { return fmt.Sprintf("%s %v: %s", e.Option, e.Value, e.Want) }

// Validate reports out-of-range options as an *OptionError.
func (o *Options) Validate() error {
	switch {
	case !(o.Temperature >= 0) || math.IsInf(float64(o.Temperature), 0): // NaN too
		return &OptionError{"temperature", o.Temperature, "must be ≥ 0 and finite"}
	case o.TopK < 0:
		return &OptionError{"top-k", o.TopK, "must be ≥ 0"}
	case !(o.TopP >= 0 && o.TopP <= 1): // NaN too
		return &OptionError{"top-p", o.TopP, "must be in [0, 1]"}
	case !(o.MinP >= 0 && o.MinP <= 1):
		return &OptionError{"min-p", o.MinP, "must be in [0, 1]"}
	case PenaltyOn(o.RepeatPenalty) && !(o.RepeatPenalty >= MinRepeatPenalty && o.RepeatPenalty <= MaxRepeatPenalty): // NaN too
		return &OptionError{"repeat penalty", o.RepeatPenalty, fmt.Sprintf("want 0 or 1 (off) or a value in [%g, %g]", MinRepeatPenalty, MaxRepeatPenalty)}
	case o.RepeatWindow < 0:
		return &OptionError{"repeat window", o.RepeatWindow, "must be ≥ 0"}
	}
	return nil
}

// Candidate is a token that survived filtering, with its probability after
// renormalisation over the survivors.
type Candidate struct {
	ID int32
	P  float64
}

// Sampler picks tokens from logits. It counts its draws: one Sampler per
// sequence.
type Sampler struct {
	opts  Options
	draws uint64 // tokens picked so far: the next draw is Uniform(Seed, draws)
	buf   []float32
}

// NewSampler returns a sampler for opts (validated).
func NewSampler(opts Options) (*Sampler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Sampler{opts: opts}, nil
}

// Penalize applies the repetition penalty in place to the logits of tokens
// among the last window entries of history (window ≤ 0: DefaultRepeatWindow;
// Options.Validate refuses a negative one, but Filter does not validate).
func Penalize(logits []float32, history []int32, penalty float32, window int) {
	if !PenaltyOn(penalty) {
		return
	}
	if window <= 0 {
		window = DefaultRepeatWindow
	}
	if len(history) > window {
		history = history[len(history)-window:]
	}
	seen := make(map[int32]bool, len(history))
	for _, t := range history {
		if t < 0 || int(t) >= len(logits) || seen[t] {
			continue
		}
		seen[t] = true
		if logits[t] > 0 {
			logits[t] /= penalty
		} else {
			logits[t] *= penalty
		}
	}
}

// Filter returns the candidates sampling draws from, most likely first:
// repetition penalty, then top-k, softmax at the temperature, top-p, min-p,
// renormalised. With greedy options it returns the argmax alone (P = 1).
// NaNs are never candidates (TopK sorts them last, where the softmax would
// spread them over every probability), so logits that are all NaN give none.
// logits is not modified.
func Filter(logits []float32, history []int32, opts Options) []Candidate {
	l := append([]float32(nil), logits...)
	return filter(l, history, &opts)
}

func filter(l []float32, history []int32, o *Options) []Candidate {
	Penalize(l, history, o.RepeatPenalty, o.RepeatWindow)
	if o.IsGreedy() {
		i := Argmax(l)
		if len(l) == 0 || l[i] != l[i] {
			return nil
		}
		return []Candidate{{ID: int32(i), P: 1}}
	}
	ids := TopK(l, o.TopK)
	return candidates(ids, func(i int) float32 { return l[ids[i]] }, o)
}

// candidates applies the temperature, top-p and min-p to the top-k ids
// (sorted as TopK sorts them), whose logits logit(i) gives, and
// renormalises. The NaNs at the end of ids are dropped first (nil: all).
func candidates(ids []int32, logit func(i int) float32, o *Options) []Candidate {
	n := len(ids)
	for n > 0 && logit(n-1) != logit(n-1) {
		n--
	}
	if n == 0 {
		return nil
	}
	ids = ids[:n]
	// Softmax over the kept tokens at temperature T (max subtracted). The
	// best logit's own weight is 1, exp(0), without the subtraction, which
	// would be ∞ − ∞ = NaN for an infinite one (an overflow): a +∞ logit then
	// takes all the probability (with its ties), and logits all −∞ are
	// equal. For finite ones this is exp's own result, bit for bit
	// (TestExpZeroIsOne); kernels/draw.cu's sample_draw does the same.
	T := float64(o.Temperature)
	maxL := float64(logit(0))
	cands := make([]Candidate, len(ids))
	var sum float64
	for i, id := range ids {
		p := 1.0
		if l := float64(logit(i)); l != maxL {
			p = exp((l - maxL) / T)
		}
		cands[i] = Candidate{ID: id, P: p}
		sum += p
	}
	for i := range cands {
		cands[i].P /= sum
	}
	if o.TopP > 0 && o.TopP < 1 {
		var cum float64
		for i := range cands {
			cum += cands[i].P
			if cum >= float64(o.TopP) {
				cands = cands[:i+1]
				break
			}
		}
	}
	if o.MinP > 0 {
		thr := float64(o.MinP) * cands[0].P
		n := 1
		for n < len(cands) && cands[n].P >= thr {
			n++
		}
		cands = cands[:n]
	}
	sum = 0
	for _, c := range cands {
		sum += c.P
	}
	for i := range cands {
		cands[i].P /= sum
	}
	return cands
}

// Sample picks the next token from logits given the token history (prompt
// and generated tokens, for the repetition penalty). Logits that are all
// NaN give model.ErrNaNLogits.
func (s *Sampler) Sample(logits []float32, history []int32) (int32, error) {
	if len(logits) == 0 { // not ErrNaNLogits: no model file is to blame
		return 0, errors.New("sample: no logits (an empty slice)")
	}
	l := logits
	if PenaltyOn(s.opts.RepeatPenalty) { // only the penalty writes to the logits
		s.buf = append(s.buf[:0], logits...)
		l = s.buf
	}
	cands := filter(l, history, &s.opts)
	if len(cands) == 0 {
		return 0, fmt.Errorf("sample: %w", model.ErrNaNLogits)
	}
	return s.draw(cands), nil
}

// TopOnly reports whether SampleTop can stand in for Sample: sampling (not
// greedy), no repetition penalty, and top-k between 1 and k.
func (o *Options) TopOnly(k int) bool {
	return !o.IsGreedy() && !PenaltyOn(o.RepeatPenalty) && o.TopK > 0 && o.TopK <= k
}

// SampleTop is Sample given only the top-k tokens of the logits: ids sorted
// as TopK sorts them (logit descending, ties by lower id, NaNs last) and
// their logits, len(ids) == TopK. Where TopOnly holds it draws the same
// token from the same random state as Sample on the whole logits would
// (TestSampleTopMatchesSample): what a backend that selects the top k on
// its device returns instead of the vocabulary's logits.
func (s *Sampler) SampleTop(ids []int32, logits []float32) (int32, error) {
	if !s.opts.TopOnly(len(ids)) || len(ids) != s.opts.TopK || len(logits) != len(ids) {
		return 0, fmt.Errorf("sample: %d top ids and %d logits for top-k %d (greedy %v, penalty %g)",
			len(ids), len(logits), s.opts.TopK, s.opts.IsGreedy(), s.opts.RepeatPenalty)
	}
	cands := candidates(ids, func(i int) float32 { return logits[i] }, &s.opts)
	if len(cands) == 0 {
		return 0, fmt.Errorf("sample: %w", model.ErrNaNLogits)
	}
	return s.draw(cands), nil
}

// draw picks a candidate with its probability: the next number of the
// seed's stream, taken whether or not there is a choice to make.
func (s *Sampler) draw(cands []Candidate) int32 {
	u := Uniform(s.opts.Seed, s.draws)
	s.draws++
	if len(cands) == 1 {
		return cands[0].ID
	}
	var cum float64
	for _, c := range cands {
		cum += c.P
		if u < cum {
			return c.ID
		}
	}
	return cands[len(cands)-1].ID
}

// IsStop reports whether tok is one of the stop tokens.
func (o *Options) IsStop(tok int32) bool {
	for _, s := range o.Stop {
		if s == tok {
			return true
		}
	}
	return false
}

// TopK returns the ids of the k largest logits (all when k ≤ 0 or ≥ len),
// sorted by logit descending, ties by lower id, NaNs last (equal NaNs by
// lower id): the order SampleTop expects and the GPU's top-k (kernels/topk.cu)
// reproduces. A size-k min-heap
// keeps it O(n log k) for the usual k = 40 over a 250k vocabulary, and a
// logit strictly below the heap's smallest is rejected by one comparison,
// without the ranking function: that is almost every logit, and the loop is
// the host's whole share of a sampled step (BenchmarkSample).
func TopK(l []float32, k int) []int32 {
	below := func(a, b int32) bool { // a ranks below b
		la, lb := l[a], l[b]
		if na, nb := la != la, lb != lb; na || nb {
			if na != nb {
				return na
			}
			return a > b
		}
		if la != lb {
			return la < lb
		}
		return a > b
	}
	var ids []int32
	if k <= 0 || k >= len(l) {
		ids = make([]int32, len(l))
		for i := range ids {
			ids[i] = int32(i)
		}
	} else {
		h := &idHeap{ids: make([]int32, 0, k), less: below}
		for i := range k {
			heap.Push(h, int32(i))
		}
		// A NaN minimum makes every comparison false: each logit then takes
		// the exact path.
		floor := l[h.ids[0]]
		offer := func(i int) {
			if id := int32(i); below(h.ids[0], id) {
				h.ids[0] = id
				heap.Fix(h, 0)
				floor = l[h.ids[0]]
			}
		}
		i := k
		for ; i+8 <= len(l); i += 8 { // eight at a time: one branch for the usual all-below case
			c := l[i : i+8 : i+8]
			if c[0] < floor && c[1] < floor && c[2] < floor && c[3] < floor &&
				c[4] < floor && c[5] < floor && c[6] < floor && c[7] < floor {
				continue
			}
			for j := i; j < i+8; j++ {
				if !(l[j] < floor) {
					offer(j)
				}
			}
		}
		for ; i < len(l); i++ {
			if !(l[i] < floor) {
				offer(i)
			}
		}
		ids = h.ids
	}
	slices.SortFunc(ids, func(a, b int32) int {
		if below(b, a) {
			return -1
		}
		return 1
	})
	return ids
}

type idHeap struct {
	ids  []int32
	less func(a, b int32) bool
}

func (h *idHeap) Len() int           { return len(h.ids) }
func (h *idHeap) Less(i, j int) bool { return h.less(h.ids[i], h.ids[j]) }
func (h *idHeap) Swap(i, j int)      { h.ids[i], h.ids[j] = h.ids[j], h.ids[i] }
func (h *idHeap) Push(x any)         { h.ids = append(h.ids, x.(int32)) }
func (h *idHeap) Pop() any {
	x := h.ids[len(h.ids)-1]
	h.ids = h.ids[:len(h.ids)-1]
	return x
}

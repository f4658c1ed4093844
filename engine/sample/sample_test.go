package sample

import (
	"context"
	"errors"
	"github.com/memra-ai/memra/engine/model"
	"math"
	"slices"
	"strings"
	"testing"
)

// probLogits gives logits whose softmax at T = 1 is exactly
// (0.4, 0.3, 0.15, 0.1, 0.05).
func probLogits() []float32 {
	p := []float64{0.4, 0.3, 0.15, 0.1, 0.05}
	l := make([]float32, len(p))
	for i, v := range p {
		l[i] = float32(math.Log(v))
	}
	return l
}

// probTol: logits are float32, so each probability carries ~1e-7 relative
// error from rounding log(p); 1e-6 is ample.
const probTol = 1e-6

func checkCands(t *testing.T, name string, got []Candidate, ids []int32, ps []float64) {
	t.Helper()
	if len(got) != len(ids) {
		t.Fatalf("%s: %d candidates %v, want ids %v", name, len(got), got, ids)
	}
	for i := range ids {
		if got[i].ID != ids[i] || !(math.Abs(got[i].P-ps[i]) <= probTol) { // NaN fails
			t.Errorf("%s: cand %d = %+v, want id %d p %.6f", name, i, got[i], ids[i], ps[i])
		}
	}
}

func TestFilter(t *testing.T) {
	l := probLogits()
	cases := []struct {
		name string
		opts Options
		hist []int32
		ids  []int32
		ps   []float64
	}{
		{"greedy", Options{}, nil, []int32{0}, []float64{1}},
		{"all", Options{Temperature: 1}, nil, []int32{0, 1, 2, 3, 4}, []float64{0.4, 0.3, 0.15, 0.1, 0.05}},
		// keep 3, renormalise by 0.85
		{"top-k 3", Options{Temperature: 1, TopK: 3}, nil, []int32{0, 1, 2}, []float64{0.4 / 0.85, 0.3 / 0.85, 0.15 / 0.85}},
		// cumulative 0.4, 0.7 ≥ 0.65: keep 2
		{"top-p 0.65", Options{Temperature: 1, TopP: 0.65}, nil, []int32{0, 1}, []float64{4.0 / 7, 3.0 / 7}},
		// threshold 0.3·0.4 = 0.12: 0.15 stays, 0.1 goes
		{"min-p 0.3", Options{Temperature: 1, MinP: 0.3}, nil, []int32{0, 1, 2}, []float64{0.4 / 0.85, 0.3 / 0.85, 0.15 / 0.85}},
		// T = 0.5 squares the probabilities: 0.16, 0.09, 0.0225, 0.01, 0.0025 (sum 0.285)
		{"temp 0.5", Options{Temperature: 0.5}, nil, []int32{0, 1, 2, 3, 4},
			[]float64{0.16 / 0.285, 0.09 / 0.285, 0.0225 / 0.285, 0.01 / 0.285, 0.0025 / 0.285}},
		// T = 0.5 then top-p 0.8: 0.5614 + 0.3158 = 0.877 ≥ 0.8 → keep 2: 0.16/0.25, 0.09/0.25
		{"temp 0.5 + top-p 0.8", Options{Temperature: 0.5, TopP: 0.8}, nil, []int32{0, 1}, []float64{0.64, 0.36}},
		// Negative logits are multiplied by the penalty: token 0 → 0.4² = 0.16,
		// token 4 → 0.05² = 0.0025; order becomes 1, 0, 2, 3, 4 (sum 0.7125).
		{"repeat 2", Options{Temperature: 1, RepeatPenalty: 2}, []int32{0, 4, 0}, []int32{1, 0, 2, 3, 4},
			[]float64{0.3 / 0.7125, 0.16 / 0.7125, 0.15 / 0.7125, 0.1 / 0.7125, 0.0025 / 0.7125}},
		// Window 1: only the last token (1) is penalised: 0.3² = 0.09 (sum 0.79).
		{"repeat window 1", Options{Temperature: 1, RepeatPenalty: 2, RepeatWindow: 1}, []int32{0, 4, 1},
			[]int32{0, 2, 3, 1, 4}, []float64{0.4 / 0.79, 0.15 / 0.79, 0.1 / 0.79, 0.09 / 0.79, 0.05 / 0.79}},
		// top-k 4 then min-p 0.5 of the renormalised top (0.4/0.95): keeps 0.4 and 0.3 only.
		{"top-k 4 + min-p 0.5", Options{Temperature: 1, TopK: 4, MinP: 0.5}, nil, []int32{0, 1}, []float64{4.0 / 7, 3.0 / 7}},
	}
	for _, c := range cases {
		checkCands(t, c.name, Filter(l, c.hist, c.opts), c.ids, c.ps)
	}
	// Positive logits are divided: (2, 1) with penalty 2 on token 0 → (1, 1): a tie, lower id first.
	got := Filter([]float32{2, 1}, []int32{0}, Options{Temperature: 1, RepeatPenalty: 2})
	checkCands(t, "repeat positive", got, []int32{0, 1}, []float64{0.5, 0.5})
	if l[0] != float32(math.Log(0.4)) {
		t.Error("Filter modified its input")
	}
	// Edges, on four equal logits (each P exactly 0.25): top-p stops where
	// the sum reaches p ("at least TopP"), min-p keeps a token exactly at
	// the threshold ("drops tokens below").
	flat := []float32{0, 0, 0, 0}
	checkCands(t, "top-p at the sum", Filter(flat, nil, Options{Temperature: 1, TopP: 0.5}), []int32{0, 1}, []float64{0.5, 0.5})
	checkCands(t, "min-p at the threshold", Filter(flat, nil, Options{Temperature: 1, MinP: 1}),
		[]int32{0, 1, 2, 3}, []float64{0.25, 0.25, 0.25, 0.25})
}

func TestSamplerDistributionAndSeed(t *testing.T) {
	l := probLogits()
	opts := Options{Temperature: 1, TopK: 3, Seed: 42}
	s1, _ := NewSampler(opts)
	s2, _ := NewSampler(opts)
	const n = 30000
	counts := make([]int, len(l))
	for range n {
		a, b := mustSample(t, s1, l, nil), mustSample(t, s2, l, nil)
		if a != b {
			t.Fatal("same seed, different tokens")
		}
		counts[a]++
	}
	want := []float64{0.4 / 0.85, 0.3 / 0.85, 0.15 / 0.85, 0, 0}
	for i, p := range want {
		// 5 standard deviations of a binomial count: never flaky with a
		// fixed seed, yet catches a wrong distribution.
		sd := math.Sqrt(n * p * (1 - p))
		if math.Abs(float64(counts[i])-n*p) > 5*sd+0.5 {
			t.Errorf("token %d drawn %d times, want %.0f ± %.0f", i, counts[i], n*p, 5*sd)
		}
	}
	s3, _ := NewSampler(Options{Temperature: 1, Seed: 43})
	same := 0
	s1, _ = NewSampler(Options{Temperature: 1, Seed: 42})
	for range 200 {
		if mustSample(t, s1, l, nil) == mustSample(t, s3, l, nil) {
			same++
		}
	}
	if same == 200 {
		t.Error("different seeds gave identical streams")
	}
	for _, o := range []Options{{TopP: 1.5}, {TopP: float32(math.NaN())}, {MinP: float32(math.NaN())}, {Temperature: float32(math.NaN())},
		{RepeatPenalty: float32(math.NaN())}, {RepeatPenalty: float32(math.Inf(1))},
		{Temperature: float32(math.Inf(1))}, {RepeatPenalty: 1e-45}, {RepeatPenalty: 0.0099}, {RepeatPenalty: 101}, {RepeatPenalty: -1}} {
		if _, err := NewSampler(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	for _, p := range []float32{0, 1, MinRepeatPenalty, 1.3, MaxRepeatPenalty} {
		if _, err := NewSampler(Options{Temperature: 1, RepeatPenalty: p}); err != nil {
			t.Errorf("repeat penalty %g refused: %v", p, err)
		}
	}
}

// TestPenaltyBoundsKeepLogitsFinite: at either bound, a penalised logit of
// 3.4e36 in magnitude (far past any model's) stays finite, so the softmax
// never meets +Inf; at 1e-45 (accepted before the bounds) a logit of 3 did
// not, and the draw fell through to the least likely candidate.
func TestPenaltyBoundsKeepLogitsFinite(t *testing.T) {
	for _, p := range []float32{MinRepeatPenalty, MaxRepeatPenalty} {
		l := []float32{3.4e36, -3.4e36}
		Penalize(l, []int32{0, 1}, p, 0)
		for i, x := range l {
			if math.IsInf(float64(x), 0) || math.IsNaN(float64(x)) {
				t.Errorf("penalty %g: logit %d became %g", p, i, x)
			}
		}
	}
	l := []float32{3}
	Penalize(l, []int32{0}, 1e-45, 0)
	if !math.IsInf(float64(l[0]), 1) {
		t.Errorf("penalty 1e-45 gave %g: the premise of the lower bound no longer holds", l[0])
	}
}

// fakeDecoder's logits after token t peak at (t+1) mod vocab.
type fakeDecoder struct {
	vocab, n, capacity int
	fed                []int32
}

func (f *fakeDecoder) DecodeStep(tok int32) ([]float32, error) {
	if f.n >= f.capacity {
		return nil, errors.New("full")
	}
	f.n++
	f.fed = append(f.fed, tok)
	l := make([]float32, f.vocab)
	l[(int(tok)+1)%f.vocab] = 5
	return l, nil
}
func (f *fakeDecoder) Reset()        { f.n = 0; f.fed = nil }
func (f *fakeDecoder) Len() int      { return f.n }
func (f *fakeDecoder) Capacity() int { return f.capacity }

func TestGenerate(t *testing.T) {
	d := &fakeDecoder{vocab: 10, capacity: 100}
	var streamed []int32
	out, st, err := Generate(d, []int32{3, 5}, 4, Options{}, func(tok int32) error {
		streamed = append(streamed, tok)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// First token from the logits after the last prompt token (5 → 6).
	want := []int32{6, 7, 8, 9}
	if !equal32(out, want) || !equal32(streamed, want) {
		t.Fatalf("out %v streamed %v, want %v", out, streamed, want)
	}
	// The last token is not fed back: prompt + 3 generated.
	if !equal32(d.fed, []int32{3, 5, 6, 7, 8}) || st.GenTokens != 4 || st.PromptTokens != 2 {
		t.Fatalf("fed %v stats %+v", d.fed, st)
	}
	// Stop token 8 ends after emitting it.
	d.Reset()
	out, _, err = Generate(d, []int32{5}, 10, Options{Stop: []int32{8}}, nil)
	if err != nil || !equal32(out, []int32{6, 7, 8}) {
		t.Fatalf("stop: out %v err %v", out, err)
	}
	// emit returning ErrStop ends without error.
	d.Reset()
	out, _, err = Generate(d, []int32{0}, 10, Options{}, func(tok int32) error {
		if tok == 2 {
			return ErrStop
		}
		return nil
	})
	if err != nil || !equal32(out, []int32{1, 2}) {
		t.Fatalf("ErrStop: out %v err %v", out, err)
	}
	// Capacity: 3 prompt + 5 generated − 1 = 7 > 6.
	d = &fakeDecoder{vocab: 10, capacity: 6}
	if _, _, err := Generate(d, []int32{1, 2, 3}, 5, Options{}, nil); err == nil ||
		!strings.Contains(err.Error(), "capacity 6") {
		t.Fatalf("capacity: err %v", err)
	}
	if _, _, err := Generate(d, []int32{1, 2, 3}, 4, Options{}, nil); err != nil {
		t.Fatalf("exactly full: %v", err)
	}
	// A count that makes the sum wrap (n = math.MaxInt: "until a stop
	// token") is refused as too many, not taken as fitting, and never
	// reaches the history's allocation (a makeslice panic).
	d = &fakeDecoder{vocab: 10, capacity: 6}
	if _, _, err := Generate(d, []int32{1, 2, 3}, math.MaxInt, Options{}, nil); err == nil ||
		!strings.Contains(err.Error(), "capacity 6") {
		t.Fatalf("n = MaxInt: err %v", err)
	}
}

func equal32(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// feedFake is fakeDecoder that can also Feed (no logits), counting calls.
type feedFake struct {
	fakeDecoder
	feeds, steps int
	refuse       bool // Feed fails
}

func (f *feedFake) Feed(tokens []int32) error {
	f.feeds++
	if f.refuse {
		return errors.New("feed refused")
	}
	for _, t := range tokens {
		if _, err := f.fakeDecoder.DecodeStep(t); err != nil {
			return err
		}
	}
	return nil
}

func (f *feedFake) DecodeStep(tok int32) ([]float32, error) {
	f.steps++
	return f.fakeDecoder.DecodeStep(tok)
}

// TestGenerateFeeds: a Feeder gets the prompt's tokens before its last in
// one Feed, the rest goes through DecodeStep, and the tokens are those of
// a decoder without Feed; a one-token prompt feeds nothing.
func TestGenerateFeeds(t *testing.T) {
	for _, prompt := range [][]int32{{3, 5, 1, 7}, {4}} {
		f, ref := &feedFake{fakeDecoder: fakeDecoder{vocab: 10, capacity: 100}}, &fakeDecoder{vocab: 10, capacity: 100}
		got, _, err := Generate(f, prompt, 5, Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := Generate(plainDecoder{ref}, prompt, 5, Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		feeds := 0
		if len(prompt) > 1 {
			feeds = 1
		}
		if !slices.Equal(got, want) || !slices.Equal(f.fed, ref.fed) || f.feeds != feeds || f.steps != 5 {
			t.Errorf("prompt %v: tokens %v fed %v, want %v fed %v; %d Feed and %d DecodeStep calls, want %d and 5",
				prompt, got, f.fed, want, ref.fed, f.feeds, f.steps, feeds)
		}
	}
	// A Feed error ends generation, naming the prompt.
	f := &feedFake{fakeDecoder: fakeDecoder{vocab: 10, capacity: 100}, refuse: true}
	if out, _, err := Generate(f, []int32{1, 2, 3}, 4, Options{}, nil); err == nil || err.Error() != "generate: prompt: feed refused" || out != nil || f.steps != 0 {
		t.Errorf("refused Feed: out %v, err %v, %d DecodeStep calls", out, err, f.steps)
	}
}

// cancelFeeder is feedFake as a ContextFeeder that cancels its context
// itself once it has appended at tokens, as a signal would in mid-feed.
type cancelFeeder struct {
	feedFake
	at     int
	cancel context.CancelFunc
}

func (f *cancelFeeder) FeedContext(ctx context.Context, tokens []int32) error {
	for _, t := range tokens {
		if f.n == f.at {
			f.cancel()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, err := f.fakeDecoder.DecodeStep(t); err != nil {
			return err
		}
	}
	return nil
}

// cancelStepper is fakeDecoder (no Feed) cancelling its context once it
// holds at tokens.
type cancelStepper struct {
	fakeDecoder
	at     int
	cancel context.CancelFunc
}

func (f *cancelStepper) DecodeStep(tok int32) ([]float32, error) {
	l, err := f.fakeDecoder.DecodeStep(tok)
	if f.n == f.at {
		f.cancel()
	}
	return l, err
}

// TestGenerateContextStopsPrompt: a context done while the prompt is fed
// stops the feed there, inside a ContextFeeder's Feed or between a plain
// decoder's steps, with nothing generated, an error wrapping the
// context's, and PromptTokens the tokens the decoder holds; one done
// before the call feeds nothing. A context that stays live changes
// nothing: the tokens are Generate's.
func TestGenerateContextStopsPrompt(t *testing.T) {
	prompt := []int32{3, 5, 1, 7, 2, 4, 6, 8}
	for _, at := range []int{0, 1, 3, 6} {
		ctx, cancel := context.WithCancel(context.Background())
		f := &cancelFeeder{feedFake: feedFake{fakeDecoder: fakeDecoder{vocab: 10, capacity: 100}}, at: at, cancel: cancel}
		out, st, err := GenerateContext(ctx, f, prompt, 5, Options{}, func(int32) error { t.Error("a token was emitted"); return nil })
		if !errors.Is(err, context.Canceled) || out != nil || st.PromptTokens != at || f.n != at || f.steps != 0 {
			t.Errorf("feeder cancelled at %d: out %v, err %v, PromptTokens %d, decoder holds %d, %d steps", at, out, err, st.PromptTokens, f.n, f.steps)
		}
		cancel()
	}
	for _, at := range []int{1, 4, 7} { // the prompt's last token is a step too, whose logits pick the first token
		ctx, cancel := context.WithCancel(context.Background())
		d := &cancelStepper{fakeDecoder: fakeDecoder{vocab: 10, capacity: 100}, at: at, cancel: cancel}
		out, st, err := GenerateContext(ctx, d, prompt, 5, Options{}, nil)
		if !errors.Is(err, context.Canceled) || out != nil || st.PromptTokens != at || d.n != at {
			t.Errorf("steps cancelled at %d: out %v, err %v, PromptTokens %d, decoder holds %d", at, out, err, st.PromptTokens, d.n)
		}
		cancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := &fakeDecoder{vocab: 10, capacity: 100}
	if out, _, err := GenerateContext(ctx, d, prompt, 5, Options{}, nil); !errors.Is(err, context.Canceled) || out != nil || d.n != 0 {
		t.Errorf("done before the call: out %v, err %v, decoder holds %d", out, err, d.n)
	}
	live, stop := context.WithCancel(context.Background())
	defer stop()
	f := &cancelFeeder{feedFake: feedFake{fakeDecoder: fakeDecoder{vocab: 10, capacity: 100}}, at: -1, cancel: stop}
	got, _, err := GenerateContext(live, f, prompt, 5, Options{}, nil)
	want, _, err2 := Generate(&fakeDecoder{vocab: 10, capacity: 100}, prompt, 5, Options{}, nil)
	if err != nil || err2 != nil || !slices.Equal(got, want) {
		t.Errorf("live context: %v (%v), Generate gives %v (%v)", got, err, want, err2)
	}
}

// mustSample is s.Sample, failing the test on an error.
func mustSample(t *testing.T, s *Sampler, l []float32, history []int32) int32 {
	t.Helper()
	tok, err := s.Sample(l, history)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestSampleNaNLogits: logits that are all NaN (non-finite weights) give
// model.ErrNaNLogits on every path, greedy or sampled, with the penalty or
// the top k alone, where the argmax would quietly give token 0; some NaNs
// among numbers are passed over.
func TestSampleNaNLogits(t *testing.T) {
	nan := float32(math.NaN())
	all := []float32{nan, nan, nan, nan, nan}
	some := []float32{nan, 1, nan, 3, 2}
	for _, o := range []Options{
		{Greedy: true},
		{Temperature: 0.8, TopK: 4, TopP: 0.95, MinP: 0.05, Seed: 1}, // a NaN in the top 4 of some
		{Temperature: 0.8, TopK: 0, Seed: 2},
		{Greedy: true, RepeatPenalty: 1.3, RepeatWindow: 4},
	} {
		s, err := NewSampler(o)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Sample(all, []int32{1, 2}); !errors.Is(err, model.ErrNaNLogits) {
			t.Errorf("%+v, all NaN: %v, want ErrNaNLogits", o, err)
		}
		if tok, err := s.Sample(some, []int32{1}); err != nil || some[tok] != some[tok] {
			t.Errorf("%+v, some NaN: token %d, %v; want a number's", o, tok, err)
		}
		// No logits at all is the caller's mistake, not a file's weights
		// that are not finite, which ErrNaNLogits would send them to look for.
		if _, err := s.Sample(nil, nil); err == nil || errors.Is(err, model.ErrNaNLogits) || !strings.Contains(err.Error(), "no logits") {
			t.Errorf("%+v, empty logits: %v, want an error saying no logits", o, err)
		}
	}
	s, _ := NewSampler(Options{Temperature: 1, TopK: 2, Seed: 3})
	if _, err := s.SampleTop([]int32{0, 1}, []float32{nan, nan}); !errors.Is(err, model.ErrNaNLogits) {
		t.Errorf("SampleTop, all NaN: %v, want ErrNaNLogits", err)
	}
	if tok, err := s.SampleTop([]int32{3, 1}, []float32{3, nan}); err != nil || (tok != 3 && tok != 1) {
		t.Errorf("SampleTop, one NaN: %d, %v", tok, err)
	}
}

// TestSampleInfiniteLogits: an infinite best logit (an overflow) must not
// turn the softmax into NaNs (∞ − ∞), which made every cumulative sum false
// and drew the last candidate, the least likely token. A +∞ logit takes all
// the probability (shared with its ties), as it does in the limit and as the
// argmax picks it; logits that are all −∞ are equal, so uniform.
func TestSampleInfiniteLogits(t *testing.T) {
	inf := float32(math.Inf(1))
	l := []float32{1, inf, 0, -3}
	for _, o := range []Options{
		{Temperature: 1},
		{Temperature: 0.7, TopP: 0.9, Seed: 4},
		{Temperature: 1, MinP: 0.1},
		{Temperature: 1, TopK: 2, Seed: 5},
	} {
		for _, c := range Filter(l, nil, o) {
			if c.ID == 1 && c.P != 1 || c.ID != 1 && c.P != 0 {
				t.Errorf("%+v: candidate %+v, want token 1 alone to have P 1", o, c)
			}
		}
		s, err := NewSampler(o)
		if err != nil {
			t.Fatal(err)
		}
		for range 8 {
			if tok, err := s.Sample(l, nil); tok != 1 || err != nil {
				t.Errorf("%+v: Sample = %d, %v; want the +Inf logit's token 1", o, tok, err)
			}
		}
	}
	s, _ := NewSampler(Options{Temperature: 1, TopK: 3, Seed: 6})
	if tok, err := s.SampleTop([]int32{2, 0, 1}, []float32{inf, inf, 5}); err != nil || tok == 1 {
		t.Errorf("SampleTop with two +Inf: %d, %v; want token 2 or 0", tok, err)
	}
	ninf := float32(math.Inf(-1))
	cands := Filter([]float32{ninf, ninf, ninf, ninf}, nil, Options{Temperature: 1})
	if len(cands) != 4 {
		t.Fatalf("all -Inf: %v, want 4 candidates", cands)
	}
	for _, c := range cands {
		if c.P != 0.25 {
			t.Errorf("all -Inf: candidate %+v, want P 0.25", c)
		}
	}
}

// TestExpZeroIsOne: the best logit's weight is 1 without calling exp
// (candidates, and kernels/draw.cu's sample_draw); both computed exp(0)
// before, so finite logits draw the tokens they drew only because exp(0) is
// exactly 1.
func TestExpZeroIsOne(t *testing.T) {
	if e := exp(0); e != 1 {
		t.Fatalf("exp(0) = %v, want exactly 1", e)
	}
}

// TestPenalizeNegativeWindow: a negative window (Options.Validate refuses
// it, but Penalize and Filter take their arguments as they come) is the
// default window, as 0 is; it sliced history[len+1:] and panicked.
func TestPenalizeNegativeWindow(t *testing.T) {
	l := []float32{2, -2, 1}
	Penalize(l, []int32{0, 1}, 2, -1)
	// 2/2 = 1 and −2·2 = −4; token 2 is not in the history.
	if want := []float32{1, -4, 1}; !slices.Equal(l, want) {
		t.Errorf("window -1: logits %v, want %v", l, want)
	}
	// Through Filter: logits (2, 1) with token 0 penalised by 2 become
	// (1, 1), so each has probability 1/2.
	got := Filter([]float32{2, 1}, []int32{0}, Options{Temperature: 1, RepeatPenalty: 2, RepeatWindow: -5})
	checkCands(t, "Filter, window -5", got, []int32{0, 1}, []float64{0.5, 0.5})
}

// TestFilterSemantics pins, on hand-worked distributions, the choices where
// samplers differ (Options' doc): min-p after the temperature
// (transformers' order; llama.cpp applies it at temperature 1), and ties at
// the top-k boundary (exactly k, lower ids first; transformers keeps every
// tie). Top-p after the temperature is TestFilter's "temp 0.5 + top-p 0.8":
// at T = 1 it would keep 3 tokens (0.4 + 0.3 < 0.8).
func TestFilterSemantics(t *testing.T) {
	l := []float32{0, float32(-math.Log(10))} // T = 1: p ∝ (1, 0.1), ratio 0.1
	// T = 2: weights 1 and 10^−0.5 = 0.316228, ratio 0.316 ≥ 0.2: both stay
	// (at T = 1, 0.1 < 0.2 would drop token 1). P = 1/1.316228 = 0.759747,
	// 0.316228/1.316228 = 0.240253.
	checkCands(t, "T 2, min-p 0.2", Filter(l, nil, Options{Temperature: 2, MinP: 0.2}),
		[]int32{0, 1}, []float64{0.759747, 0.240253})
	// T = 0.5: weights 1 and 10^−2, ratio 0.01 < 0.05: token 1 goes (at
	// T = 1, 0.1 ≥ 0.05 would keep it).
	checkCands(t, "T 0.5, min-p 0.05", Filter(l, nil, Options{Temperature: 0.5, MinP: 0.05}),
		[]int32{0}, []float64{1})
	// (3, 1, 1, 1), top-k 2: token 1 wins the three-way tie for 2nd place.
	// P = e³/(e³ + e) = 1/(1 + e^−2) = 1/1.135335 = 0.880797, and 0.119203.
	checkCands(t, "top-k 2, tie at the boundary", Filter([]float32{3, 1, 1, 1}, nil, Options{Temperature: 1, TopK: 2}),
		[]int32{0, 1}, []float64{0.880797, 0.119203})
	// A tie at the top: both kept, lower id first, 1/2 each.
	checkCands(t, "top-k 2, tie at the top", Filter([]float32{1, 2, 2, 0}, nil, Options{Temperature: 1, TopK: 2}),
		[]int32{1, 2}, []float64{0.5, 0.5})
}

// TestSampleInverseCDF: a draw takes the first candidate whose cumulative
// probability exceeds u, and every pick, even one with a single candidate,
// takes the next u of the seed's stream (as kernels/draw.cu's sample_draw
// advances its index). With seed 0 the stream is splitmix64's published
// first outputs (TestUniformIsSplitMix64): u ≈ 0xe220…/2^64 = 0.8833,
// 0x6e78…/2^64 = 0.4315, 0x06c4…/2^64 = 0.0264, 0xf88b…/2^64 = 0.9709.
// probLogits' cumulative probabilities are 0.4, 0.7, 0.85, 0.95, 1, so
// those pick tokens 3, 1, 0 and 4.
func TestSampleInverseCDF(t *testing.T) {
	l := probLogits()
	s, _ := NewSampler(Options{Temperature: 1})
	var got []int32
	for range 4 {
		got = append(got, mustSample(t, s, l, nil))
	}
	if want := []int32{3, 1, 0, 4}; !slices.Equal(got, want) {
		t.Errorf("seed 0: tokens %v, want %v", got, want)
	}
	// A single candidate (the others NaN) takes u = 0.8833 without a
	// choice; the next pick then draws 0.4315: token 1, not 3.
	nan := float32(math.NaN())
	s, _ = NewSampler(Options{Temperature: 1})
	if tok := mustSample(t, s, []float32{nan, nan, 7, nan, nan}, nil); tok != 2 {
		t.Fatalf("single candidate: token %d, want 2", tok)
	}
	if tok := mustSample(t, s, l, nil); tok != 1 {
		t.Errorf("after a single-candidate pick: token %d, want 1 (the second draw's)", tok)
	}
}

// TestArgmax: the first of equal maxima, NaNs skipped, and 0 when there is
// no number to choose (every element NaN, or none).
func TestArgmax(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for _, c := range []struct {
		x    []float32
		want int
	}{
		{[]float32{1, 5, 5, 2}, 1}, {[]float32{nan, -1, -3}, 1}, {[]float32{-2}, 0},
		{[]float32{-inf, -inf, 3, inf, inf}, 3}, {[]float32{nan, nan}, 0}, {nil, 0},
	} {
		if got := Argmax(c.x); got != c.want {
			t.Errorf("Argmax(%v) = %d, want %d", c.x, got, c.want)
		}
	}
}

// TestGenerateUnboundedCapacity: a Decoder without a context limit (a
// recurrent model's, Capacity math.MaxInt) generating "until a stop token"
// (n = math.MaxInt) passes the capacity check with a one-token prompt, so
// the history must not be allocated for len(prompt) + n tokens: that sum
// wrapped negative and Generate panicked in makeslice.
func TestGenerateUnboundedCapacity(t *testing.T) {
	d := &fakeDecoder{vocab: 10, capacity: math.MaxInt}
	out, _, err := Generate(d, []int32{3}, math.MaxInt, Options{Stop: []int32{6}}, nil)
	if err != nil || !slices.Equal(out, []int32{4, 5, 6}) {
		t.Fatalf("capacity and n math.MaxInt, stop 6: out %v, err %v; want [4 5 6]", out, err)
	}
	// With the penalty on, the history (prompt and generated) is what
	// Penalize reads: still the right tokens, not a short or stale slice.
	d.Reset()
	out, _, err = Generate(d, []int32{3}, math.MaxInt, Options{Stop: []int32{6}, RepeatPenalty: 1.5}, nil)
	if err != nil || !slices.Equal(out, []int32{4, 5, 6}) {
		t.Fatalf("with a penalty: out %v, err %v; want [4 5 6]", out, err)
	}
}

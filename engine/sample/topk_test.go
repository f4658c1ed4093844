package sample

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// qwenVocab is the Qwen3.5 vocabulary size (qwen35-gguf.md): the logits a
// sampler sees every step.
const qwenVocab = 248320

// randomLogits returns n logits drawn from N(0, 3) with some exact ties and,
// with nan set, a few NaNs, to exercise TopK's ordering rules.
func randomLogits(r *rand.Rand, n int, nan bool) []float32 {
	l := make([]float32, n)
	for i := range l {
		l[i] = float32(r.NormFloat64() * 3)
	}
	for i := 0; i < n/50; i++ { // ties: copy a value elsewhere
		l[r.IntN(n)] = l[r.IntN(n)]
	}
	if nan {
		for i := 0; i < 5; i++ {
			l[r.IntN(n)] = float32(math.NaN())
		}
	}
	return l
}

// sortedIDs is TopK's definition spelled out: every id, by logit
// descending, ties by lower id, NaNs last; the first k.
func sortedIDs(l []float32, k int) []int32 {
	ids := make([]int32, len(l))
	for i := range ids {
		ids[i] = int32(i)
	}
	slices.SortStableFunc(ids, func(a, b int32) int {
		na, nb := l[a] != l[a], l[b] != l[b]
		switch {
		case na != nb:
			if na {
				return 1
			}
			return -1
		case !na && l[a] != l[b]:
			if l[a] > l[b] {
				return -1
			}
			return 1
		}
		return int(a - b)
	})
	if k > 0 && k < len(ids) {
		ids = ids[:k]
	}
	return ids
}

func TestTopKMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 1000, 20000} {
		for _, k := range []int{0, 1, 2, 40, 999, 5000} {
			for _, nan := range []bool{false, true} {
				l := randomLogits(r, n, nan)
				if got, want := TopK(l, k), sortedIDs(l, k); !slices.Equal(got, want) {
					t.Fatalf("n %d k %d nan %v: TopK differs from the sorted order (first ids %v, want %v)",
						n, k, nan, got[:min(5, len(got))], want[:min(5, len(want))])
				}
			}
		}
	}
}

// BenchmarkSample is one sampled token with the CLI's defaults over a
// Qwen3.5-sized vocabulary: the host's share of every sampled decode step.
func BenchmarkSample(b *testing.B) {
	l := randomLogits(rand.New(rand.NewPCG(3, 4)), qwenVocab, false)
	s, err := NewSampler(Options{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, Seed: 7})
	if err != nil {
		b.Fatal(err)
	}
	hist := []int32{1, 2, 3}
	b.SetBytes(int64(4 * len(l)))
	for b.Loop() {
		if _, err := s.Sample(l, hist); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTopK(b *testing.B) {
	l := randomLogits(rand.New(rand.NewPCG(3, 4)), qwenVocab, false)
	b.SetBytes(int64(4 * len(l)))
	for b.Loop() {
		TopK(l, 40)
	}
}

// TestSampleTopMatchesSample: given TopK's ids and their logits, SampleTop
// draws what Sample draws from the whole logits, step for step from one
// seed, for every filter the CLI sets.
func TestSampleTopMatchesSample(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, o := range []Options{
		{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, Seed: 1},
		{Temperature: 1.5, TopK: 64, Seed: 2},
		{Temperature: 0.3, TopK: 1, Seed: 3},
		{Temperature: 1, TopK: 7, TopP: 0.5, Seed: 4, RepeatPenalty: 1},
	} {
		full, _ := NewSampler(o)
		top, _ := NewSampler(o)
		for step := range 50 {
			l := randomLogits(r, 5000, step%10 == 3)
			ids := TopK(l, o.TopK)
			vals := make([]float32, len(ids))
			for i, id := range ids {
				vals[i] = l[id]
			}
			want := mustSample(t, full, l, nil)
			got, err := top.SampleTop(ids, vals)
			if err != nil || got != want {
				t.Fatalf("%+v step %d: SampleTop %d (%v), Sample %d", o, step, got, err, want)
			}
		}
	}
	// Where the top k does not determine the draw, SampleTop refuses.
	for _, o := range []Options{{}, {Temperature: 1}, {Temperature: 1, TopK: 5, RepeatPenalty: 1.1}} {
		s, _ := NewSampler(o)
		if _, err := s.SampleTop([]int32{0, 1, 2, 3, 4}, make([]float32, 5)); err == nil {
			t.Errorf("%+v: SampleTop accepted", o)
		}
	}
}

// topFake is fakeDecoder with DecodeTop over random logits (seeded by the
// step), counting which path Generate took.
type topFake struct {
	fakeDecoder
	maxTop     int
	full, tops int
}

func (f *topFake) logits(tok int32) ([]float32, error) {
	if _, err := f.fakeDecoder.DecodeStep(tok); err != nil {
		return nil, err
	}
	return randomLogits(rand.New(rand.NewPCG(uint64(f.n), uint64(tok))), f.vocab, false), nil
}

func (f *topFake) DecodeStep(tok int32) ([]float32, error) { f.full++; return f.logits(tok) }

func (f *topFake) DecodeTop(tok int32, k int) ([]int32, []float32, error) {
	f.tops++
	l, err := f.logits(tok)
	if err != nil {
		return nil, nil, err
	}
	ids := TopK(l, k)
	vals := make([]float32, len(ids))
	for i, id := range ids {
		vals[i] = l[id]
	}
	return ids, vals, nil
}

func (f *topFake) MaxTop() int { return f.maxTop }

// plainDecoder hides DecodeTop: only Decoder's methods come through.
type plainDecoder struct{ Decoder }

func TestGenerateTop(t *testing.T) {
	newFake := func(maxTop int) *topFake {
		return &topFake{fakeDecoder: fakeDecoder{vocab: 3000, capacity: 100}, maxTop: maxTop}
	}
	for _, c := range []struct {
		opts  Options
		maxT  int
		tops  int // DecodeTop calls expected: the last prompt token and n-1 generated
		steps int
	}{
		{Options{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, Seed: 9}, 64, 12, 2},
		{Options{Temperature: 0.8, TopK: 40, Seed: 9}, 32, 0, 14},                     // k past MaxTop
		{Options{Temperature: 0.8, TopK: 40, RepeatPenalty: 1.3, Seed: 9}, 64, 0, 14}, // the penalty needs the logits
		{Options{Temperature: 0.8, Seed: 9}, 64, 0, 14},                               // top-k off
	} {
		f, ref := newFake(c.maxT), newFake(c.maxT)
		got, _, err := Generate(f, []int32{1, 2, 3}, 12, c.opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := Generate(plainDecoder{ref}, []int32{1, 2, 3}, 12, c.opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ref.tops != 0 {
			t.Fatalf("the reference run took DecodeTop %d times", ref.tops)
		}
		if !slices.Equal(got, want) || f.tops != c.tops || f.full != c.steps {
			t.Errorf("%+v max %d: tokens %v, want %v; %d DecodeTop and %d DecodeStep calls, want %d and %d",
				c.opts, c.maxT, got, want, f.tops, f.full, c.tops, c.steps)
		}
	}
}

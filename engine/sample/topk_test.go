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
// with nan set, a few NaNs, to exercise topK's ordering rules.
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

// sortedIDs is topK's definition spelled out: every id, by logit
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
				if got, want := topK(l, k), sortedIDs(l, k); !slices.Equal(got, want) {
					t.Fatalf("n %d k %d nan %v: topK differs from the sorted order (first ids %v, want %v)",
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
		s.Sample(l, hist)
	}
}

func BenchmarkTopK(b *testing.B) {
	l := randomLogits(rand.New(rand.NewPCG(3, 4)), qwenVocab, false)
	b.SetBytes(int64(4 * len(l)))
	for b.Loop() {
		topK(l, 40)
	}
}

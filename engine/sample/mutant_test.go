package sample

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestValidateProbabilityBounds: top-p and min-p take every value in
// [0, 1], both ends included (1 is "off" for top-p and "only the top
// token's ties" for min-p), and nothing outside it.
func TestValidateProbabilityBounds(t *testing.T) {
	for _, o := range []Options{{Temperature: 1, TopP: 1}, {Temperature: 1, MinP: 1}, {Temperature: 1, TopP: 0, MinP: 0}} {
		if _, err := NewSampler(o); err != nil {
			t.Errorf("%+v refused: %v", o, err)
		}
	}
	for _, o := range []Options{{MinP: -0.5}, {MinP: 1.5}, {TopP: -0.1}, {TopK: -1}, {RepeatWindow: -1}, {Temperature: -1}} {
		if _, err := NewSampler(o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

// TestPenalizeIgnoresIDsOutsideLogits: history ids below 0 or at or past
// the vocabulary (a prompt's bad token) are skipped, not indexed; the
// tokens in range are penalised once each, however often they repeat.
func TestPenalizeIgnoresIDsOutsideLogits(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	l := make([]float32, 6)
	for i := range l {
		l[i] = float32(r.NormFloat64()*3) + 0.25 // random, non-zero
	}
	want := slices.Clone(l)
	const p = 1.3
	for _, i := range []int{2, 4} {
		if want[i] > 0 {
			want[i] /= p
		} else {
			want[i] *= p
		}
	}
	Penalize(l, []int32{-1, 2, 6, 4, 2, math.MaxInt32, -7}, p, 0)
	if !slices.Equal(l, want) {
		t.Errorf("penalised %v, want %v", l, want)
	}
}

// TestSampleLeavesLogits: Sample with a repetition penalty penalises a
// copy; the decoder's logits are as it returned them (Filter's contract,
// which Sample shares).
func TestSampleLeavesLogits(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	l := randomLogits(r, 500, false)
	orig := slices.Clone(l)
	s, err := NewSampler(Options{Temperature: 0.8, TopK: 40, RepeatPenalty: 1.5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	hist := []int32{int32(Argmax(l)), 7, 99, 250}
	for range 3 {
		mustSample(t, s, l, hist)
	}
	if !slices.Equal(l, orig) {
		t.Error("Sample with a penalty modified the caller's logits")
	}
}

// TestSampleTopRefusesMismatchedLogits: SampleTop with top-k ids but a
// different number of logits is an error, not a short read or a panic.
func TestSampleTopRefusesMismatchedLogits(t *testing.T) {
	s, err := NewSampler(Options{Temperature: 1, TopK: 4})
	if err != nil {
		t.Fatal(err)
	}
	ids := []int32{3, 0, 2, 1}
	for _, n := range []int{3, 5} {
		logits := make([]float32, n)
		for i := range logits {
			logits[i] = float32(4 - i)
		}
		if tok, err := s.SampleTop(ids, logits); err == nil {
			t.Errorf("%d ids, %d logits: accepted (token %d)", len(ids), n, tok)
		}
	}
	if _, err := s.SampleTop(ids[:3], []float32{3, 2, 1}); err == nil {
		t.Error("3 ids for top-k 4: accepted")
	}
}

// TestGenerateZeroAndCachedCapacity: n = 0 generates nothing and steps the
// decoder not at all; the capacity check counts the tokens already cached
// (Generate does not reset), so a continued sequence that would overrun is
// refused before any step.
func TestGenerateZeroAndCachedCapacity(t *testing.T) {
	d := &fakeDecoder{vocab: 10, capacity: 100}
	out, st, err := Generate(d, []int32{3, 5}, 0, Options{}, nil)
	if err != nil || out != nil || len(d.fed) != 0 || st.GenTokens != 0 {
		t.Fatalf("n = 0: out %v, err %v, fed %v", out, err, d.fed)
	}
	// 2 cached + 3 prompt + 3 generated − 1 = 7 > 6; with 2 generated, 6 fits.
	d = &fakeDecoder{vocab: 10, capacity: 6}
	for _, tok := range []int32{1, 2} {
		if _, err := d.DecodeStep(tok); err != nil {
			t.Fatal(err)
		}
	}
	if out, _, err := Generate(d, []int32{4, 5, 6}, 3, Options{}, nil); err == nil ||
		!strings.Contains(err.Error(), "2 cached") || len(d.fed) != 2 {
		t.Fatalf("2 cached, 3 prompt, 3 generated in 6: out %v, err %v, fed %v", out, err, d.fed)
	}
	if out, _, err := Generate(d, []int32{4, 5, 6}, 2, Options{}, nil); err != nil || !slices.Equal(out, []int32{7, 8}) {
		t.Fatalf("exactly full after 2 cached: out %v, err %v", out, err)
	}
}

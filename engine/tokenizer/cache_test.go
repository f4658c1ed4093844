package tokenizer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// TestWordCache fills the cache past cacheLimit with random words (so that
// it grows and is cleared) and checks every lookup against a plain map of
// what was put since the last clear. Words come from a small alphabet so
// that many share lengths and prefixes.
func TestWordCache(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := newWordCache()
	ref := map[string][]int32{}
	clears := 0
	word := func() string {
		var b strings.Builder
		for n := 2 + rng.IntN(12); n > 0; n-- {
			b.WriteByte("abcé "[rng.IntN(5)])
		}
		return b.String()
	}
	for i := range cacheLimit + cacheLimit/2 {
		w := word()
		got, h, ok := c.get(w)
		want, inRef := ref[w]
		if ok != inRef || !slices.Equal(got, want) {
			t.Fatalf("step %d: get(%q) = %v, %v; want %v, %v", i, w, got, ok, want, inRef)
		}
		if ok {
			continue
		}
		ids := make([]int32, 1+rng.IntN(4))
		for j := range ids {
			ids[j] = 1 + rng.Int32N(1<<20)
		}
		if c.n >= cacheLimit {
			clear(ref) // the cache clears itself when full
			clears++
		}
		c.put(w, h, ids)
		ref[w] = slices.Clone(ids)
		ids[0] = -1 // put must have copied ids
	}
	if clears == 0 {
		t.Fatalf("the cache never filled: %d entries", c.n)
	}
	for w, want := range ref {
		if got, _, ok := c.get(w); !ok || !slices.Equal(got, want) {
			t.Fatalf("final get(%q) = %v, %v; want %v", w, got, ok, want)
		}
	}
}

// TestWordCacheCollision: a word whose hash matches a cached word's (the
// same slot and the same high bits the slot keeps) but whose bytes differ
// is a miss, not the other word's ids; put is told the other word's hash
// to make the collision that 2^32 random words would.
func TestWordCacheCollision(t *testing.T) {
	c := newWordCache()
	_, h, _ := c.get("ab")
	c.put("cd", h, []int32{7}) // same length as "ab", stored under "ab"'s hash
	if got, _, ok := c.get("ab"); ok {
		t.Errorf(`get("ab") after put("cd") with its hash = %v, want a miss`, got)
	}
	if got, _, ok := c.get("cd"); ok {
		t.Errorf(`get("cd") under another hash = %v, want a miss`, got)
	}
}

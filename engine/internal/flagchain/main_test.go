package main

import (
	"slices"
	"testing"
)

// TestReference checks the host chain by hand: x = [1, 2] has Σ 3, so one
// node gives [3·1+3, 3·2+3] = [6, 9], a second Σ 15 and [33, 42]; and
// uint32 wraps (2^31 + 2^31 sums to 0, times 3 is 2^31 each).
func TestReference(t *testing.T) {
	for _, c := range []struct {
		x0    []uint32
		nodes int
		want  []uint32
	}{
		{[]uint32{1, 2}, 1, []uint32{6, 9}},
		{[]uint32{1, 2}, 2, []uint32{33, 42}},
		{[]uint32{1 << 31, 1 << 31}, 1, []uint32{1 << 31, 1 << 31}},
	} {
		if got := reference(c.x0, c.nodes); !slices.Equal(got, c.want) {
			t.Errorf("reference(%v, %d) = %v, want %v", c.x0, c.nodes, got, c.want)
		}
	}
}

// TestInts: a bad entry becomes -1, which run rejects as a length, a
// sleep and an opts value.
func TestInts(t *testing.T) {
	if got := ints("1, 132,x"); !slices.Equal(got, []int{1, 132, -1}) {
		t.Errorf("ints = %v", got)
	}
	for _, c := range []struct{ grids, words, sleeps, opts []int }{
		{[]int{1}, []int{-1}, []int{0}, []int{0}},
		{[]int{1}, []int{300}, []int{0}, []int{0}},
		{[]int{1}, []int{256}, []int{-1}, []int{0}},
		{[]int{1}, []int{256}, []int{0}, []int{4}},
	} {
		if err := run("", 64, c.grids, c.words, c.sleeps, c.opts); err == nil {
			t.Errorf("run(%v) accepted bad input", c)
		}
	}
	if err := run("", 2, []int{1}, []int{256}, []int{0}, []int{0}); err == nil {
		t.Error("run accepted 2 nodes")
	}
}

package main

import (
	"slices"
	"strings"
	"testing"
)

// TestReference checks the host chain by hand: x = [1, 2] has Σ 3, so one
// node gives [3·1+3, 3·2+3] = [6, 9], a second Σ 15 and [33, 42]; uint32
// wraps (2^31 + 2^31 sums to 0, times 3 is 2^31 each); with two blocks and
// weight sums [10, 20] for node 0, word 0 gets 10 and word 1 gets 20:
// [16, 29]; with one block, 10 to both: [16, 19].
func TestReference(t *testing.T) {
	for _, c := range []struct {
		x0          []uint32
		nodes, grid int
		wsum        [][]uint32
		want        []uint32
	}{
		{[]uint32{1, 2}, 1, 1, nil, []uint32{6, 9}},
		{[]uint32{1, 2}, 2, 2, nil, []uint32{33, 42}},
		{[]uint32{1 << 31, 1 << 31}, 1, 1, nil, []uint32{1 << 31, 1 << 31}},
		{[]uint32{1, 2}, 1, 2, [][]uint32{{10, 20}}, []uint32{16, 29}},
		{[]uint32{1, 2}, 1, 1, [][]uint32{{10}}, []uint32{16, 19}},
	} {
		if got := reference(c.x0, c.nodes, c.grid, c.wsum); !slices.Equal(got, c.want) {
			t.Errorf("reference(%v, %d, %d, %v) = %v, want %v", c.x0, c.nodes, c.grid, c.wsum, got, c.want)
		}
	}
}

// TestValidate: good flags pass; each bad one fails with an error that names
// the flag and the entry (a length off the block, a weight count past the
// kernel's 8, a negative sleep, too few nodes).
func TestValidate(t *testing.T) {
	if err := validate(64, []int{256, 1024}, []int{0, 8}, []int{0, 128}); err != nil {
		t.Fatalf("good flags: %v", err)
	}
	for _, c := range []struct {
		nodes                int
		words, wpers, sleeps []int
		want                 string
	}{
		{64, []int{-1}, []int{0}, []int{0}, "-words: -1"},
		{64, []int{300}, []int{0}, []int{0}, "-words: 300"},
		{64, []int{256}, []int{-1}, []int{0}, "-wper: -1"},
		{64, []int{256}, []int{9}, []int{0}, "-wper: 9"},
		{64, []int{256}, []int{0}, []int{0, -1}, "-sleep: -1"},
		{2, []int{256}, []int{0}, []int{0}, "-nodes 2"},
	} {
		err := validate(c.nodes, c.words, c.wpers, c.sleeps)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("validate(%d, %v, %v, %v) = %v, want an error with %q", c.nodes, c.words, c.wpers, c.sleeps, err, c.want)
		}
	}
}

package main

import (
	"maps"
	"testing"
)

// TestWantCounters: the counters each form leaves after nbar + 1 barriers,
// worked by hand, including a short last group.
func TestWantCounters(t *testing.T) {
	for _, c := range []struct {
		k    kase
		nbar int
		want map[int]uint32
	}{
		{kase{132, kindFlat, 1}, 9, map[int]uint32{ctlTop: 1320}},
		{kase{264, kindGeneration, 1}, 9, map[int]uint32{ctlGen: 10}},
		{kase{264, kindSameLine, 1}, 9, map[int]uint32{ctlSame + 1: 10}},
		// 10 blocks in groups of 4: groups of 4, 4 and 2, three arrivals a barrier on the top.
		{kase{10, kindTwoLevel, 4}, 1, map[int]uint32{ctlTop: 6, ctlGroup: 8, ctlGroup + ctlLine: 8, ctlGroup + 2*ctlLine: 4}},
	} {
		if got := wantCounters(c.k, c.nbar); !maps.Equal(got, c.want) {
			t.Errorf("%v, %d barriers: %v, want %v", c.k, c.nbar, got, c.want)
		}
		for w := range c.want {
			if w >= ctlWords(c.k) {
				t.Errorf("%v: word %d past the %d words it clears", c.k, w, ctlWords(c.k))
			}
		}
	}
}

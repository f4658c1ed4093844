package gpu

import "testing"

// TestL2HoldPays: the presets' state and scratch against the weight bytes a
// step reads (bench's memory report, run271 and run263), and whether the L2
// window paid for them on the H200 in run302 (graph tok/s at 1k and 32k,
// the window on against MEMRA_L2WINDOW=0): 0.8B gained, 2B q8_0 was even
// and 2B bf16 lost. 9B was not timed with a hold (its 53.6 MiB exceed the
// set-aside); its ratios lie below 2B q8_0's.
func TestL2HoldPays(t *testing.T) {
	for _, c := range []struct {
		preset       string
		hot, weights uint64
		want         bool
	}{
		{"0.8b-bf16", 23519428, 1505783040, true},
		{"0.8b-q8_0", 23519428, 800881920, true},
		{"0.8b-q4_k", 23519428, 424934656, true},
		{"2b-q8_0", 23558340, 2001050880, false},
		{"2b-bf16", 23558340, 3764747520, false},
		{"9b-q4_k", 56215876, 4468035840, false},
		{"9b-bf16", 56215876, 15875500032, false},
	} {
		if got := l2HoldPays(c.hot, c.weights); got != c.want {
			t.Errorf("%s: l2HoldPays(%d, %d) = %v, want %v", c.preset, c.hot, c.weights, got, c.want)
		}
	}
}

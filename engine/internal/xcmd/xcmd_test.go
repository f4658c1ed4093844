package xcmd

import (
	"slices"
	"testing"
)

// TestInts: spaces are trimmed and a bad entry becomes -1.
func TestInts(t *testing.T) {
	if got := Ints("1, 132,x"); !slices.Equal(got, []int{1, 132, -1}) {
		t.Errorf("Ints = %v", got)
	}
	if got := Ints(""); !slices.Equal(got, []int{-1}) {
		t.Errorf(`Ints("") = %v, want [-1]`, got)
	}
}

// TestMedian: odd and even counts, input left unsorted.
func TestMedian(t *testing.T) {
	xs := []float64{3, 1, 2}
	if got := Median(xs); got != 2 || xs[0] != 3 {
		t.Errorf("Median(3, 1, 2) = %v (input %v)", got, xs)
	}
	if got := Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("Median(4, 1, 3, 2) = %v, want 2.5", got)
	}
}

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

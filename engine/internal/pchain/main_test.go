package main

import (
	"testing"
	"unsafe"
)

// TestPhaseLayout checks what pchain.cu assumes of the host: pc_phase is
// three pointers and three int32 (40 bytes with padding), kind 0 is R 4 rows
// of cols/256 = 4 loads per lane and kind 1 R 1 row of 14 (pc_prefetch's
// template arguments), and a unit's loads fit the 16-entry register buffer.
func TestPhaseLayout(t *testing.T) {
	if got := unsafe.Sizeof(phase{}); got != 40 {
		t.Errorf("phase is %d bytes, pc_phase 40", got)
	}
	for k, want := range []struct{ r, c int }{{4, 4}, {1, 14}} {
		s := shapes[k]
		if s.cols%256 != 0 || s.cols/256 != want.c {
			t.Errorf("kind %d: cols %d gives %d loads per lane, the kernel has %d", k, s.cols, s.cols/256, want.c)
		}
		if s.rows%want.r != 0 || want.r*want.c > 16 {
			t.Errorf("kind %d: %d rows in units of %d (%d loads)", k, s.rows, want.r, want.r*want.c)
		}
	}
	// The FFN chain: down reads the first cols of gate|up's output, and
	// writes the gate|up input.
	if shapes[1].cols > shapes[0].rows || shapes[1].rows != shapes[0].cols {
		t.Errorf("shapes %v do not chain", shapes)
	}
}

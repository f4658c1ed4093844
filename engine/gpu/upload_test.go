package gpu

import (
	"bytes"
	"testing"
)

// TestRepackQ8_0 checks the q8_0 device layout on hand-built blocks: block b's
// scale bytes land at s[2b:2b+2], its 32 quants at q[32b:32b+32], and
// unpackQ8Row restores ggml's bytes.
func TestRepackQ8_0(t *testing.T) {
	const n = 3
	src := make([]byte, n*q8Block)
	for b := range n {
		src[b*q8Block] = byte(0x10 + b) // scale low byte
		src[b*q8Block+1] = byte(0x3c)   // scale high byte
		for j := range 32 {
			src[b*q8Block+2+j] = byte(b*32 + j + 1)
		}
	}
	q, s := make([]byte, 32*n), make([]byte, 2*n)
	repackQ8_0(q, s, src)
	if want := []byte{0x10, 0x3c, 0x11, 0x3c, 0x12, 0x3c}; !bytes.Equal(s, want) {
		t.Fatalf("scales % x, want % x", s, want)
	}
	for i, v := range q {
		if v != byte(i+1) {
			t.Fatalf("quant %d = %d, want %d", i, v, i+1)
		}
	}
	back := make([]byte, len(src))
	unpackQ8Row(back, q, s)
	if !bytes.Equal(back, src) {
		t.Fatal("unpackQ8Row(repackQ8_0(x)) != x")
	}
}

// TestContiguous: rows of one backing array in order come back as one slice;
// reordered or foreign rows are refused (they must be staged).
func TestContiguous(t *testing.T) {
	data := make([]byte, 40)
	other := make([]byte, 40)
	rows := func(src ...[]byte) func(int) []byte { return func(i int) []byte { return src[i] } }
	if run, ok := contiguous(rows(data[0:10], data[10:20], data[20:30]), 0, 3, 10); !ok || len(run) != 30 {
		t.Fatalf("in-order rows: ok=%v len=%d", ok, len(run))
	}
	if _, ok := contiguous(rows(data[10:20], data[0:10]), 0, 2, 10); ok {
		t.Fatal("reversed rows accepted")
	}
	if _, ok := contiguous(rows(data[0:10], other[10:20], data[20:30]), 0, 3, 10); ok {
		t.Fatal("a foreign middle row accepted")
	}
}

package main

import (
	"encoding/binary"
	"testing"
)

// TestStreamXor walks barload.cu's read order by hand: three 16-byte words
// whose uint32s are 10w+k, thread 1 with stride 2 reads words 1, then 3 - 3
// = 0, then 2: the XOR of all three; with n = 0 nothing; with stride 3
// (= the word count) word 1 three times, which XORs to word 1.
func TestStreamXor(t *testing.T) {
	buf := make([]byte, 48)
	for w := range 3 {
		for k := range 4 {
			binary.LittleEndian.PutUint32(buf[16*w+4*k:], uint32(10*w+k))
		}
	}
	word := func(w int) [4]uint32 {
		return [4]uint32{uint32(10 * w), uint32(10*w + 1), uint32(10*w + 2), uint32(10*w + 3)}
	}
	xor := func(ws ...int) [4]uint32 {
		var x [4]uint32
		for _, w := range ws {
			for k, v := range word(w) {
				x[k] ^= v
			}
		}
		return x
	}
	for _, c := range []struct {
		self, stride, n uint64
		want            [4]uint32
	}{
		{1, 2, 3, xor(1, 0, 2)},
		{1, 2, 0, [4]uint32{}},
		{1, 2, 1, xor(1)},
		{4, 2, 2, xor(1, 0)}, // self wraps first: 4 % 3 = 1
		{1, 3, 3, xor(1)},
	} {
		if got := streamXor(buf, c.self, c.stride, c.n); got != c.want {
			t.Errorf("streamXor(self %d, stride %d, n %d) = %v, want %v", c.self, c.stride, c.n, got, c.want)
		}
	}
}

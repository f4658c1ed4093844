package gguf

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestRecodeSameValues checks Recode's promise on random blocks: every code,
// scale and high bit pattern (random bytes), the f16 d finite and random, so
// the decoded values of the recoded blocks equal the originals bit for bit.
// The decoders are checked on their own against hand-worked blocks
// (dequant_test.go), so this compares two independent readings of the
// same values.
func TestRecodeSameValues(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct {
		from, to Type
		dOff     int // the f16 d's offset in a from block
	}{{TypeQ3_K, TypeQ6_K, 108}, {TypeQ4_0, TypeQ8_0, 0}, {TypeQ5_0, TypeQ8_0, 0}, {TypeIQ4_NL, TypeQ8_0, 0}} {
		t.Run(c.from.String(), func(t *testing.T) {
			const blocks = 4096
			src := randBytes(r, blocks*c.from.BlockBytes())
			for b := range blocks {
				// A finite f16 of either sign, including subnormals.
				h := uint16(r.Uint32())
				for h&0x7c00 == 0x7c00 {
					h = uint16(r.Uint32())
				}
				binary.LittleEndian.PutUint16(src[b*c.from.BlockBytes()+c.dOff:], h)
			}
			recodeSame(t, c.from, c.to, src)
		})
	}
}

// TestRecodeCodes pins the Q3_K mapping on one hand-built superblock: d = 1,
// every scale sc−32 = 1, so each value is its code, −4..3 in turn
// (value c is (c%8)−4): the recoded Q6_K block holds q = value+32.
func TestRecodeCodes(t *testing.T) {
	b := make([]byte, 110)
	for c := range 256 {
		v := c%8 - 4
		u := v + 4 // 0..7: bit 2 is "no −4", bits 0-1 the low code
		n, j, l := c/128, c%128/32, c%32
		b[32+32*n+l] |= byte(u&3) << (2 * j)
		if u&4 != 0 {
			b[l] |= 1 << (4*n + j)
		}
	}
	// Scales 33 (sc−32 = 1): low nibbles 1 (bytes 0..7, both nibbles), high
	// bits 2 (0b10 in each of bytes 8..11's four pairs).
	for i := range 8 {
		b[96+i] = 0x11
	}
	for i := 8; i < 12; i++ {
		b[96+i] = 0xaa
	}
	binary.LittleEndian.PutUint16(b[108:], h1)
	y := deq(t, TypeQ3_K, b)
	for c, v := range y {
		if v != float32(c%8-4) {
			t.Fatalf("the hand-built Q3_K block decodes value %d to %v, want %d", c, v, c%8-4)
		}
	}
	out := make([]byte, 210)
	if err := Recode(TypeQ6_K, out, TypeQ3_K, b); err != nil {
		t.Fatal(err)
	}
	for i := range 16 {
		if int8(out[192+i]) != 1 {
			t.Errorf("Q6_K scale %d = %d, want 1", i, int8(out[192+i]))
		}
	}
	expectAll(t, TypeQ6_K, deq(t, TypeQ6_K, out), y)
}

// TestRecodeRefuses checks the errors: a pair without an exact mapping, and
// buffers that are not whole blocks or do not match.
func TestRecodeRefuses(t *testing.T) {
	for _, c := range []struct {
		to, from Type
		dst, src int
		want     string
	}{
		{TypeQ4_K, TypeQ3_K, 144, 110, "Q3_K as Q4_K: not supported"},
		{TypeQ8_0, TypeQ4_1, 34, 20, "Q4_1 as Q8_0: not supported"},
		{TypeQ8_0, TypeIQ4_XS, 34 * 8, 136, "IQ4_XS as Q8_0: not supported"},
		{TypeQ6_K, TypeQ2_K, 210, 84, "not supported"},
		{TypeQ6_K, TypeQ3_K, 210, 109, "109 bytes in"},
		{TypeQ6_K, TypeQ3_K, 209, 110, "210 bytes a block out"},
		{TypeQ8_0, TypeQ5_0, 68, 22, "68 out"},
	} {
		err := Recode(c.to, make([]byte, c.dst), c.from, make([]byte, c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Recode(%v ← %v, %d ← %d bytes) = %v, want an error containing %q", c.to, c.from, c.dst, c.src, err, c.want)
		}
		if CanRecode(c.from, c.to) && strings.Contains(c.want, "not supported") {
			t.Errorf("CanRecode(%v, %v) = true", c.from, c.to)
		}
	}
	if err := Recode(TypeQ6_K, nil, TypeQ3_K, nil); err != nil {
		t.Errorf("no blocks: %v", err)
	}
}

// FuzzRecode: any bytes, as whole blocks of Q3_K, Q4_0, Q5_0 or IQ4_NL (NaN
// and Inf scales included), recode to blocks that decode to the same bits;
// a destination of the wrong size is an error, never a panic.
func FuzzRecode(f *testing.F) {
	f.Add(byte(0), make([]byte, 110))
	f.Add(byte(1), []byte{0x00, 0x3c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add(byte(2), make([]byte, 44))
	f.Add(byte(3), []byte{0x00, 0xb8, 0x0f, 0xf0, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab})
	pairs := []struct{ from, to Type }{{TypeQ3_K, TypeQ6_K}, {TypeQ4_0, TypeQ8_0}, {TypeQ5_0, TypeQ8_0}, {TypeIQ4_NL, TypeQ8_0}}
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		p := pairs[int(which)%len(pairs)]
		nb := len(data) / p.from.BlockBytes()
		src := data[:nb*p.from.BlockBytes()]
		if err := Recode(p.to, make([]byte, nb*p.to.BlockBytes()+1), p.from, src); err == nil {
			t.Fatal("a destination one byte too long accepted")
		}
		recodeSame(t, p.from, p.to, src)
	})
}

// recodeSame recodes src (whole blocks of from) as to and checks that both
// decode to the same bits, naming up to five values that do not.
func recodeSame(t *testing.T, from, to Type, src []byte) {
	t.Helper()
	nb := len(src) / from.BlockBytes()
	dst := make([]byte, nb*to.BlockBytes())
	if err := Recode(to, dst, from, src); err != nil {
		t.Fatal(err)
	}
	n := nb * from.BlockSize()
	want, got := make([]float32, n), make([]float32, n)
	if err := Dequantize(from, src, want); err != nil {
		t.Fatal(err)
	}
	if err := Dequantize(to, dst, got); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			if bad++; bad <= 5 {
				t.Errorf("value %d (block %d): %v as %v decodes to %v, was %v", i, i/from.BlockSize(), from, to, got[i], want[i])
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d values differ", bad, n)
	}
}

package main

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// TestVariantNames checks that every variant main.go times is defined in
// mvexp.cu (or mma.cuh) and parses to a geometry the kernels can have: a typo would
// otherwise surface only on the GPU machine, as a missing function.
func TestVariantNames(t *testing.T) {
	var cu string
	for _, f := range []string{"mvexp.cu", "mma.cuh"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cu += string(src)
	}
	for _, v := range parseVariants(expNames) {
		if v.r <= 0 || v.kw <= 0 || 8%v.kw != 0 {
			t.Errorf("%s: parsed R %d KW %d", v.name, v.r, v.kw)
		}
		// mvx_ names appear as macro calls BF(R, KW, U, XS) / Q8(R, KW, U),
		// mvg_ names as MVG_BF / MVG_Q8(R, KW, U, TB, PF) / MVG_Q8B(R, KW, U, TB, PF, B),
		// mma_ names as MMA_Q8(T, KW, U, TL), mmak_ names as MMAK_Q4(KW, U, B).
		var call string
		f := strings.Split(v.name, "_")
		num := func(s string) string { return s[1:] }
		switch {
		case v.q4k:
			call = "MMAK_Q4(" + num(f[2]) + ", " + num(f[3]) + ", " + num(f[4]) + ")"
		case v.mma:
			call = "MMA_Q8(" + strings.Join([]string{num(f[2]), num(f[3]), num(f[4]), num(f[5])}, ", ") + ")"
		case v.mvg && v.q8 && len(f) == 8:
			call = "MVG_Q8B(" + strings.Join([]string{num(f[2]), num(f[3]), num(f[4]), num(f[5]), num(f[6]), num(f[7])}, ", ") + ")"
		case v.mvg && v.q8:
			call = "MVG_Q8(" + strings.Join([]string{num(f[2]), num(f[3]), num(f[4]), num(f[5]), num(f[6])}, ", ") + ")"
		case v.mvg:
			call = "MVG_BF(" + strings.Join([]string{num(f[2]), num(f[3]), num(f[4]), num(f[5]), num(f[6])}, ", ") + ")"
		case v.q8:
			call = "Q8(" + strings.Join([]string{num(f[2]), num(f[3]), num(f[4])}, ", ") + ")"
		default:
			call = "BF(" + strings.Join([]string{num(f[2]), num(f[3]), num(f[4]), num(f[5])}, ", ") + ")"
		}
		if !strings.Contains(cu, "\n"+call) {
			t.Errorf("%s: mvexp.cu has no %s", v.name, call)
		}
	}
}

// TestTileLayouts reads every value back out of tileQ8 and tileQ4K's output
// by the addressing mma.cuh's kernels use (lane 4g+c, row halves, nibble
// order), on a row count that is not a multiple of 16.
func TestTileLayouts(t *testing.T) {
	const rows, cols = 21, 512
	r := rand.New(rand.NewPCG(1, 2))
	qs := make([]byte, rows*cols)
	sc := make([]uint16, rows*cols/32)
	for i := range qs {
		qs[i] = byte(r.IntN(256))
	}
	for i := range sc {
		sc[i] = uint16(r.IntN(1 << 16))
	}
	qt := tileQ8(qs, sc, rows, cols)
	nb := cols / 32
	for row := range rows {
		tl, g, h := row/16, row%16%8, row%16/8
		for col := range cols {
			b, c, i := col/32, col%32/8, col%8
			o := (tl*nb + b) * 544
			if got := qt[o+16*(4*g+c)+8*h+i]; got != qs[row*cols+col] {
				t.Fatalf("q8 row %d col %d: tile byte %d, want %d", row, col, got, qs[row*cols+col])
			}
			if col%32 == 0 {
				if got := binary.LittleEndian.Uint16(qt[o+512+4*g+2*h:]); got != sc[row*nb+b] {
					t.Fatalf("q8 row %d block %d: scale %#x, want %#x", row, b, got, sc[row*nb+b])
				}
			}
		}
	}

	k4 := make([]byte, rows*cols/256*144)
	for i := range k4 {
		k4[i] = byte(r.IntN(256))
	}
	kt := tileQ4K(k4, rows, cols)
	ns := cols / 256
	nib := [8]struct{ byte, shift int }{{0, 0}, {2, 0}, {0, 4}, {2, 4}, {1, 0}, {3, 0}, {1, 4}, {3, 4}}
	for row := range rows {
		tl, rr := row/16, row%16
		g, h := rr%8, rr/8
		for sb := range ns {
			blk := k4[(row*ns+sb)*144:]
			o := (tl*ns + sb) * 2368
			for v := range 256 {
				j, c, i := v/32, v%32/8, v%8
				w := kt[o+512*(j/2)+16*(4*g+c)+8*(j%2)+4*h:]
				if got, want := w[nib[i].byte]>>nib[i].shift&15, q4kCode(blk[16:144], v); got != want {
					t.Fatalf("q4_k row %d value %d: code %d, want %d", row, 256*sb+v, got, want)
				}
			}
			for j := range 8 {
				s, m := q4kScaleMin(blk[4:16], j)
				if int(kt[o+2048+16*rr+j]) != s || int(kt[o+2048+16*rr+8+j]) != m {
					t.Fatalf("q4_k row %d superblock %d run %d: scale/min", row, sb, j)
				}
			}
			if d := kt[o+2304+8*g+4*h : o+2304+8*g+4*h+4]; string(d) != string(blk[:4]) {
				t.Fatalf("q4_k row %d superblock %d: d/dmin % x, want % x", row, sb, d, blk[:4])
			}
		}
	}
}

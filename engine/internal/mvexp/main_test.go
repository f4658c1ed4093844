package main

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/memra-ai/memra/kernels"
)

// TestVariantNames checks that every variant main.go times is defined in
// mvexp.cu (or mma.cuh) and parses to a geometry the kernels can have: a typo would
// otherwise surface only on the GPU machine, as a missing function.
func TestVariantNames(t *testing.T) {
	var cu string
	for _, f := range []string{"mvexp.cu", "mma.cuh", "mmk6.cuh"} {
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
		// mma_ names as MMA_Q8(T, KW, U, TL), mmak_ names as MMAK_Q4 / MMAK_Q6(KW, S, B),
		// mmaq8r_ names as MMAQ8R(KW, S, B),
		// mmk6_ names as MMK6(KW, U, B),
		// mvk_ names as their kernels' lines.
		var call string
		f := strings.Split(v.name, "_")
		num := func(s string) string { return s[1:] }
		switch {
		case f[0] == "mvk":
			call = v.name + "("
		case f[0] == "mmk6":
			call = "MMK6(" + num(f[2]) + ", " + num(f[3]) + ", " + num(f[4]) + ")"
		case f[0] == "mmak":
			call = "MMAK_" + strings.ToUpper(f[1]) + "(" + num(f[2]) + ", " + num(f[3]) + ", " + num(f[4]) + ")"
		case f[0] == "mmaq8r":
			call = "MMAQ8R(" + num(f[1]) + ", " + num(f[2]) + ", " + num(f[3]) + ")"
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

// TestEngineVariants checks the engine's kernels as mvexp launches them
// against the engine's own table: a tensor-core kernel's KW divides 8 and
// gives its rows per unit, and every launch's shared memory is the engine's.
func TestEngineVariants(t *testing.T) {
	mks := map[string]kernels.MatvecKernel{}
	for _, mk := range kernels.MatvecKernels() {
		mks["engine "+mk.Name] = mk
	}
	for _, v := range engineVariants() {
		mk := mks[v.name]
		if mk.TensorCore && (v.kw <= 0 || 8%v.kw != 0 || 8/v.kw*16 != mk.RowsPerBlock || v.ring < 2) {
			t.Errorf("%s: KW %d, ring %d for %d rows per unit", v.name, v.kw, v.ring, mk.RowsPerBlock)
		}
		for _, cols := range []int{1024, 4096, 12288} {
			for _, xnorm := range []bool{false, true} {
				if got, want := v.sharedBytes(cols, xnorm), mk.Shared(cols, xnorm); got != want {
					t.Errorf("%s: %d columns, xnorm %v: %d bytes of shared memory, the engine's %d", v.name, cols, xnorm, got, want)
				}
			}
		}
	}
}

// TestTileLayoutQ8 reads every value back out of tileQ8's output by the
// addressing mma.cuh's q8_0 kernels use (lane 4g+c, row halves), on a row
// count that is not a multiple of 16. (Q4_K's tiles are the engine's:
// engine/internal/ktile tests them.)
func TestTileLayoutQ8(t *testing.T) {
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

}

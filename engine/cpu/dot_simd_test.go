package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/memra-ai/memra/gguf"
)

// TestSIMDDot checks the vector dot kernels (when this CPU has them) against
// a float64 dot over the same stored values, for lengths with and without a
// tail past the last 32-element group (K-quants: one superblock, one call's
// kChunk of them, and several calls ending in a partial one). Tolerance: f32
// accumulation over n terms in ≤ n/8 + 8 rounding steps per partial sum,
// bounded by (n/8 + 16)·2⁻²⁴·Σ|w·x|. The K-quant kernels form each weight
// in one FMA, scale·q − offset, where the dequantiser rounds scale·q first;
// but scale·q is exact in f32 (an f16 times a 6-bit integer times a 5-bit
// one: at most 22 significant bits), so both form the same weights.
func TestSIMDDot(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, typ := range []gguf.Type{gguf.TypeBF16, gguf.TypeF16, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K,
		gguf.TypeQ4_0, gguf.TypeIQ4_NL, gguf.TypeIQ4_XS, gguf.TypeQ3_K} {
		f, ok := simdDot(typ)
		if !ok {
			t.Logf("%s: no vector kernel on this CPU; the Go kernel runs", typ)
			continue
		}
		lengths := []int{32, 64, 96, 1000, 4096, 4100, 32 * (16*kChunk + 5)}
		if typ.BlockSize() == 256 {
			lengths = []int{256, 512, 256 * kChunk, 256 * (2*kChunk + 3)}
		}
		for _, n := range lengths {
			if n%typ.BlockSize() != 0 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%d", typ, n), func(t *testing.T) {
				src := make([]float32, n)
				x := make([]float32, n)
				for i := range src {
					src[i] = float32(r.NormFloat64())
					x[i] = float32(r.Float64()*2 - 1)
				}
				rb, err := gguf.RowBytes(typ, int64(n))
				if err != nil {
					t.Fatal(err)
				}
				row := make([]byte, rb)
				if err := gguf.Quantize(typ, src, row); err != nil {
					t.Fatal(err)
				}
				w := make([]float32, n)
				if err := gguf.Dequantize(typ, row, w); err != nil {
					t.Fatal(err)
				}
				var want, abs float64
				for i := range w {
					want += float64(w[i]) * float64(x[i])
					abs += math.Abs(float64(w[i]) * float64(x[i]))
				}
				got := f(row, x)
				tol := float64(n/8+16) * 0x1p-24 * abs
				if d := math.Abs(float64(got) - want); d > tol || math.IsNaN(float64(got)) {
					t.Fatalf("dot = %v, float64 %v: |diff| %.3g > %.3g", got, want, d, tol)
				}
			})
		}
	}
}

// FuzzDotSIMD compares the vector kernels with a float64 dot over
// gguf.Dequantize's values on arbitrary bytes: rows of any length (so every
// tail the Go code finishes), at any byte offset, x from any element, with
// NaN, ±Inf and subnormal weights and inputs. Where the float64 dot is
// finite and far from f32 overflow, the vector kernel and goDot (the Go
// kernels, which run where AVX2 is absent) must both be within dotBound of
// it; where it is not
// finite, both must be NaN or ±Inf (which one may differ: a q8_0 block of
// scale Inf gives NaN per lane but Inf per block). The seeds run with go
// test: lengths 0, 1, 31, 32, 33 and 100 of random weights, rows holding
// NaN, Inf and subnormals, and K-quant rows of one and two superblocks.
func FuzzDotSIMD(f *testing.F) {
	r := rand.New(rand.NewPCG(11, 12))
	for kind := range uint8(3) {
		for _, n := range []int{0, 1, 31, 32, 33, 100} {
			w := make([]byte, 34*((n+31)/32)+2*n)
			xb := make([]byte, 4*n)
			for i := range n {
				v := float32(r.NormFloat64())
				binary.LittleEndian.PutUint16(w[2*i:], gguf.F32ToF16(v))
				binary.LittleEndian.PutUint32(xb[4*i:], math.Float32bits(float32(r.NormFloat64())))
			}
			f.Add(kind, uint8(n), w, xb)
			if n >= 32 {
				special := append([]byte(nil), w...)
				// f16 NaN and Inf, a subnormal, bf16 Inf (0x7f80); in q8_0 the
				// first is a NaN scale.
				for i, h := range []uint16{0x7e00, 0x7c00, 0x0001, 0x7f80} {
					binary.LittleEndian.PutUint16(special[2+8*i:], h)
				}
				f.Add(kind, uint8(n+3), special, xb)
				sub := append([]byte(nil), xb...)
				binary.LittleEndian.PutUint32(sub[4:], 1) // the smallest subnormal
				f.Add(kind, uint8(n+5), w, sub)
			}
		}
	}
	// K-quant and 4-bit rows (kinds 3-9) of 256 and 512 weights as gguf
	// writes them, and each with a NaN scale d in its first block.
	for kind, typ := range map[uint8]gguf.Type{3: gguf.TypeQ4_K, 4: gguf.TypeQ5_K, 5: gguf.TypeQ6_K,
		6: gguf.TypeQ4_0, 7: gguf.TypeIQ4_NL, 8: gguf.TypeIQ4_XS, 9: gguf.TypeQ3_K} {
		for _, n := range []int{256, 512} {
			src := make([]float32, n)
			xb := make([]byte, 4*n)
			for i := range src {
				src[i] = float32(r.NormFloat64())
				binary.LittleEndian.PutUint32(xb[4*i:], math.Float32bits(float32(r.NormFloat64())))
			}
			w := make([]byte, n/typ.BlockSize()*typ.BlockBytes())
			if err := gguf.Quantize(typ, src, w); err != nil {
				f.Fatal(err)
			}
			f.Add(kind, uint8(n/256), w, xb)
			nan := append([]byte(nil), w...)
			at := 0 // d: the others open with it, Q6_K and Q3_K end with it
			switch typ {
			case gguf.TypeQ6_K:
				at = 208
			case gguf.TypeQ3_K:
				at = 108
			}
			binary.LittleEndian.PutUint16(nan[at:], 0x7e00)
			f.Add(kind, uint8(n/256+1), nan, xb)
		}
	}
	// A q8_0 block of scale 1/64 and q 127 against x[0] = 3e37: d·q·x is
	// finite, q·x is not, and both kernels sum q·x before scaling (the
	// fuzzer's first find, a limit of the format rather than of a kernel).
	w, xb := make([]byte, 34), make([]byte, 4*32)
	binary.LittleEndian.PutUint16(w, gguf.F32ToF16(1.0/64))
	for i := 2; i < 34; i++ {
		w[i] = 127
	}
	binary.LittleEndian.PutUint32(xb, math.Float32bits(3e37))
	f.Add(uint8(2), uint8(0), w, xb)
	types := []gguf.Type{gguf.TypeBF16, gguf.TypeF16, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K,
		gguf.TypeQ4_0, gguf.TypeIQ4_NL, gguf.TypeIQ4_XS, gguf.TypeQ3_K}
	f.Fuzz(func(t *testing.T, kind, off uint8, wb, xb []byte) {
		typ := types[int(kind)%len(types)]
		vec, ok := simdDot(typ)
		if !ok {
			t.Skipf("%s: no vector kernel on this CPU", typ)
		}
		ref, err := goDot(typ)
		if err != nil {
			t.Fatal(err)
		}
		n := len(xb) / 4
		if bs := typ.BlockSize(); bs > 1 {
			n = min(n, len(wb)/typ.BlockBytes()*bs) / bs * bs
		} else {
			n = min(n, len(wb)/2)
		}
		rb, err := gguf.RowBytes(typ, int64(n))
		if err != nil {
			t.Fatal(err)
		}
		row := make([]byte, int(rb)+7)[off&7:][:rb]
		copy(row, wb)
		x := make([]float32, n+7)[off>>3&7:][:n]
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(xb[4*i:]))
		}
		w := make([]float32, n)
		if err := gguf.Dequantize(typ, row, w); err != nil {
			t.Fatal(err)
		}
		var want, abs, unscaled float64
		for i := range w {
			want += float64(w[i]) * float64(x[i])
			abs += math.Abs(float64(w[i]) * float64(x[i]))
			if typ == gguf.TypeQ8_0 { // both kernels sum q·x before scaling by d
				unscaled += math.Abs(float64(int8(row[i/32*34+2+i%32])) * float64(x[i]))
			}
		}
		for _, k := range []struct {
			name string
			dot  dotFunc
		}{{"vector", vec}, {"go", ref}} {
			got := float64(k.dot(row, x))
			switch {
			case math.IsNaN(want) || math.IsInf(want, 0) || max(abs, unscaled) > math.MaxFloat32/2:
				// Near f32's range the sum may overflow in one order and
				// not another; only a non-finite reference binds.
				if !math.IsInf(abs, 0) && !math.IsNaN(abs) {
					continue
				}
				if !math.IsNaN(got) && !math.IsInf(got, 0) {
					t.Fatalf("%s %s n %d: %v, float64 %v", k.name, typ, n, got, want)
				}
			default:
				if d := math.Abs(got - want); !(d <= dotBound(n, abs)) {
					t.Fatalf("%s %s n %d: %v, float64 %v: |diff| %.3g > %.3g", k.name, typ, n, got, want, d, dotBound(n, abs))
				}
			}
		}
	})
}

// Command quanthash prints a SHA-256 of what gguf.Quantize makes of a fixed
// set of superblocks, and of gguf.Dequantize's floats read back from it, for
// every type the quantiser writes. `go tool mage check:arm64` runs it built
// for this machine and for linux/arm64 and wants the same lines: Go fuses
// a*b+c into one FMA on arm64 (not on amd64), which can move a rounding and
// so a chosen scale, and a file converted on a GH200 should be the file
// converted on an x86 host.
//
// The inputs come from integer randomness alone, so every platform starts
// from the same floats. They lean on what makes the quantisers' choices
// close: few distinct levels (ties between candidate scales), offsets,
// heavy tails, sub-blocks of different widths and lone outliers.
package main

import (
	"crypto/sha256"
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/memra-ai/memra/gguf"
)

func main() {
	n := flag.Int("superblocks", 16384, "superblocks of 256 values to quantise per type")
	flag.Parse()
	src := inputs(*n)
	for _, t := range []gguf.Type{gguf.TypeF16, gguf.TypeBF16, gguf.TypeQ8_0, gguf.TypeQ4_0, gguf.TypeQ5_0, gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeIQ4_NL, gguf.TypeIQ4_XS} {
		q, err := hashes(t, src)
		if err != nil {
			fmt.Fprintln(os.Stderr, "quanthash:", err)
			os.Exit(1)
		}
		fmt.Printf("%-6v %s\n", t, q)
	}
}

// hashes quantises src as t and returns the hex SHA-256 of the bytes and of
// the floats dequantised from them.
func hashes(t gguf.Type, src []float32) (string, error) {
	n, err := gguf.RowBytes(t, int64(len(src)))
	if err != nil {
		return "", err
	}
	q := make([]byte, n)
	if err := gguf.Quantize(t, src, q); err != nil {
		return "", fmt.Errorf("quantize %v: %w", t, err)
	}
	back := make([]float32, len(src))
	if err := gguf.Dequantize(t, q, back); err != nil {
		return "", fmt.Errorf("dequantize %v: %w", t, err)
	}
	fb := make([]byte, 4*len(back))
	for i, v := range back {
		binary.LittleEndian.PutUint32(fb[4*i:], math.Float32bits(v))
	}
	return fmt.Sprintf("bytes %x floats %x", sha256.Sum256(q), sha256.Sum256(fb)), nil
}

// inputs returns n superblocks of 256 values.
func inputs(n int) []float32 {
	r := rand.New(rand.NewPCG(7, 11))
	x := make([]float32, 256*n)
	for b := range n {
		superblock(r, x[256*b:256*b+256])
	}
	return x
}

func superblock(r *rand.Rand, x []float32) {
	kind := r.IntN(6)
	scale := float32(math.Ldexp(1, r.IntN(20)-24))
	off := float32(r.IntN(64)-32) * scale
	for i := range x {
		u := int32(r.Uint32()>>8) - 1<<23 // uniform in [-2^23, 2^23)
		switch kind {
		case 0: // uniform
			x[i] = float32(u) * scale / (1 << 20)
		case 1: // few levels
			x[i] = float32(u%9) * scale
		case 2: // levels plus an offset (the conversion keeps arm64 from fusing the two)
			x[i] = float32(float32(u%33)*scale) + off
		case 3: // heavy tails: a uniform times another cubed
			v := float32(int32(r.Uint32()>>8)-1<<23) / (1 << 23)
			x[i] = float32(u) / (1 << 23) * v * v * v * scale * 64
		case 4: // sub-blocks of different widths
			x[i] = float32(u%int32(3+i/32*5)) * scale
		default: // one outlier a sub-block
			x[i] = float32(u%5) * scale
			if i%32 == 7 {
				x[i] = float32(u%1000) * scale
			}
		}
	}
}

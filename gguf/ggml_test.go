package gguf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
)

// ggmlq runs the ggmlq driver (scripts/llama/ggmlq.c, built against
// llama.cpp's libggml-base by scripts/llama/quants.sh): mode "deq" or "q"
// of n values of type name, in on stdin.
func ggmlq(t *testing.T, bin, mode, name string, n int, in []byte) []byte {
	t.Helper()
	c := exec.Command(bin, mode, name, fmt.Sprint(n))
	c.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil {
		t.Fatalf("%s %s %s: %v: %s", bin, mode, name, err, stderr.String())
	}
	return out
}

// TestQuantsMatchGGML holds gguf's block codecs to ggml's own (llama.cpp's
// libggml-base through scripts/llama/ggmlq.c; skipped unless MEMRA_GGMLQ
// names the driver, as scripts/llama/quants.sh sets it). On 16,384 normal
// values a type: ggml dequantises the blocks Quantize writes to Dequantize's
// values bit for bit, and the blocks its quantize_row_*_ref writes too. The
// two quantizers' bytes are compared as well: equal for Q4_0, Q5_0 and
// Q8_0, whose rounding is fixed; for the K and IQ4 types, whose scale
// searches differ, the test logs both RMS errors and fails only if gguf's
// is more than 5% above ggml's (a worse search, not a different one).
func TestQuantsMatchGGML(t *testing.T) {
	bin := os.Getenv("MEMRA_GGMLQ")
	if bin == "" {
		t.Skip("MEMRA_GGMLQ not set: scripts/llama/quants.sh runs this against llama.cpp's ggml")
	}
	const n = 256 * 64
	r := rand.New(rand.NewPCG(61, 7))
	x := make([]float32, n)
	raw := make([]byte, 4*n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x[i]))
	}
	decode := func(b []byte) []float32 {
		y := make([]float32, len(b)/4)
		for i := range y {
			y[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return y
	}
	rms := func(y []float32) float64 {
		var s float64
		for i := range y {
			d := float64(y[i] - x[i])
			s += d * d
		}
		return math.Sqrt(s / float64(len(y)))
	}
	for _, c := range []struct {
		name  string
		t     Type
		exact bool // ggml's reference quantizer rounds as gguf's does
	}{
		{"Q4_0", TypeQ4_0, true}, {"Q5_0", TypeQ5_0, true}, {"Q8_0", TypeQ8_0, true},
		{"Q3_K", TypeQ3_K, false}, {"Q4_K", TypeQ4_K, false}, {"Q5_K", TypeQ5_K, false}, {"Q6_K", TypeQ6_K, false},
		{"IQ4_NL", TypeIQ4_NL, false}, {"IQ4_XS", TypeIQ4_XS, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			nb, err := RowBytes(c.t, n)
			if err != nil {
				t.Fatal(err)
			}
			ours := make([]byte, nb)
			if err := Quantize(c.t, x, ours); err != nil {
				t.Fatal(err)
			}
			theirs := ggmlq(t, bin, "q", c.name, n, raw)
			var errs [2]float64
			for k, blocks := range [][]byte{ours, theirs} {
				want := make([]float32, n)
				if err := Dequantize(c.t, blocks, want); err != nil {
					t.Fatal(err)
				}
				got := decode(ggmlq(t, bin, "deq", c.name, n, blocks))
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("%s blocks, value %d: ggml dequantises %g, Dequantize %g", []string{"gguf's", "ggml's"}[k], i, got[i], want[i])
					}
				}
				errs[k] = rms(want)
			}
			same := bytes.Equal(ours, theirs)
			t.Logf("%s: quantizers' bytes equal %v; RMS error gguf %.5f, ggml %.5f", c.name, same, errs[0], errs[1])
			if c.exact && !same {
				t.Error("Quantize's bytes differ from ggml's reference quantizer's")
			}
			if errs[0] > 1.05*errs[1] {
				t.Errorf("Quantize's RMS error %.5f is more than 5%% above ggml's %.5f", errs[0], errs[1])
			}
		})
	}
}

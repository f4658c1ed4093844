package convert

import (
	"testing"
)

// TestConvertF16TransformRounds: llama.cpp applies the +1 of Qwen3.5's norms
// and the −exp of A_log to an F16 checkpoint's tensors in half precision, so
// the F32 values it writes are halves. The expected values are worked out by
// hand: halves near 1 are 2⁻¹⁰ apart and near 2.7 are 2⁻⁹ apart.
func TestConvertF16TransformRounds(t *testing.T) {
	d := qwen35Dims()
	dir := t.TempDir()
	ts := hfTensors(d, 11, DTypeF16)
	set := func(name string, vals ...float32) {
		x := ts[name]
		for i := range x.data {
			x.data[i] = vals[i%len(vals)]
		}
	}
	// 1 + 1e-4 is nearer 1 than 1 + 2⁻¹⁰; 1 + 7e-4 is nearer 1 + 2⁻¹⁰;
	// 1 + 0.5 is a half.
	set("model.norm.weight", 1e-4, 7e-4, 0.5, -0.25)
	// −e = −2.71828… lies between the halves −2.716796875 and −2.71875,
	// nearer the second; −exp(0) = −1 is a half. H_v = 4 heads, reordered
	// [0 2 1 3] (see TestConvertTransforms).
	set("model.layers.0.linear_attn.A_log", 0, 1, 0, 1)
	writeCheckpoint(t, dir, d, ts)
	f, _ := convertDir(t, dir, Options{Type: FileF32})

	norm := readF32Tensor(t, f, "output_norm.weight")
	wantNorm := []float32{1, 1 + 1.0/1024, 1.5, 0.75}
	for i, got := range norm {
		if want := wantNorm[i%4]; got != want {
			t.Fatalf("output_norm.weight[%d] = %.9g, want %.9g (1+w rounded to half)", i, got, want)
		}
	}
	a := readF32Tensor(t, f, "blk.0.ssm_a")
	wantA := []float32{-1, -1, -2.71875, -2.71875}
	if len(a) != len(wantA) {
		t.Fatalf("ssm_a has %d values, want %d", len(a), len(wantA))
	}
	for i := range a {
		if a[i] != wantA[i] {
			t.Fatalf("ssm_a = %.9g, want %.9g (−exp rounded to half)", a, wantA)
		}
	}
}

package gguf

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// writeBigVocab writes a GGUF shaped like a real Qwen model's header: 1,000
// tensors and a 151,936-token vocabulary (tokens, token_type, 151,387
// merges). Tensor data is tiny: opening must not depend on it.
func writeBigVocab(b *testing.B) string {
	b.Helper()
	const nVocab, nMerges, nTensors = 151936, 151387, 1000
	r := rand.New(rand.NewPCG(9, 10))
	letters := "abcdefghijklmnopqrstuvwxyzĠĊ"
	word := func() string {
		n := 2 + r.IntN(8)
		s := make([]rune, n)
		rs := []rune(letters)
		for i := range s {
			s[i] = rs[r.IntN(len(rs))]
		}
		return string(s)
	}
	tokens := make([]string, nVocab)
	types := make([]int32, nVocab)
	for i := range tokens {
		tokens[i] = fmt.Sprintf("%s%d", word(), i)
		types[i] = 1 + int32(i%4)
	}
	merges := make([]string, nMerges)
	for i := range merges {
		merges[i] = word() + " " + word()
	}
	path := filepath.Join(b.TempDir(), "vocab.gguf")
	fd, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriter(fd)
	w := NewWriter(bw, 3)
	w.SetKV("general.architecture", StringValue("qwen35"))
	w.SetKV("qwen35.block_count", Uint32Value(24))
	w.SetKV("tokenizer.ggml.model", StringValue("gpt2"))
	w.SetKV("tokenizer.ggml.tokens", StringsValue(tokens))
	w.SetKV("tokenizer.ggml.token_type", Int32sValue(types))
	w.SetKV("tokenizer.ggml.merges", StringsValue(merges))
	data := make([]byte, 34*2)
	for i := range nTensors {
		w.AddTensorBytes(fmt.Sprintf("blk.%d.ffn_down.weight", i), TypeQ8_0, []uint64{64}, data)
	}
	if err := w.Write(); err != nil {
		b.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := fd.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkOpen opens and indexes the big-vocabulary file: header, all
// metadata, tensor infos, a lookup of every tensor and the vocabulary
// getters. Goal: < 50 ms and < 64 MiB allocated per open.
func BenchmarkOpen(b *testing.B) {
	path := writeBigVocab(b)
	b.ReportAllocs()
	for b.Loop() {
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		for i := range f.Tensors {
			if _, ok := f.Tensor(f.Tensors[i].Name); !ok {
				b.Fatal("lookup")
			}
		}
		toks, err := f.Strings("tokenizer.ggml.tokens")
		if err != nil || len(toks) != 151936 {
			b.Fatal(err)
		}
		if _, err := f.Int32s("tokenizer.ggml.token_type"); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDequantize measures one core's throughput per type over a
// 4096-element row (a hidden-size row of a small model); bytes are output
// bytes (4 per element).
func BenchmarkDequantize(b *testing.B) {
	const n = 4096
	r := rand.New(rand.NewPCG(11, 12))
	for _, typ := range []Type{TypeF32, TypeF16, TypeBF16, TypeQ8_0, TypeQ4_0, TypeQ4_1, TypeQ5_0, TypeQ5_1,
		TypeQ2_K, TypeQ3_K, TypeQ4_K, TypeQ5_K, TypeQ6_K, TypeQ8_K} {
		nb, _ := RowBytes(typ, n)
		src := randBytes(r, int(nb))
		dst := make([]float32, n)
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(4 * n)
			for b.Loop() {
				if err := Dequantize(typ, src, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkQuantize measures the converter's targets (input bytes).
func BenchmarkQuantize(b *testing.B) {
	const n = 4096
	r := rand.New(rand.NewPCG(13, 14))
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	for _, typ := range []Type{TypeF16, TypeBF16, TypeQ8_0, TypeQ4_0, TypeQ5_0, TypeQ3_K, TypeQ4_K, TypeQ5_K, TypeQ6_K, TypeIQ4_NL, TypeIQ4_XS} {
		nb, _ := RowBytes(typ, n)
		dst := make([]byte, nb)
		b.Run(typ.String(), func(b *testing.B) {
			b.SetBytes(4 * n)
			for b.Loop() {
				if err := Quantize(typ, x, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRecode measures one core's throughput of Recode over a
// 4096-element row (bytes: the input's), as a GPU load recodes every row of
// a Q4_0 or Q5_0 matrix (and of Q3_K ones where they are stored as Q6_K).
func BenchmarkRecode(b *testing.B) {
	const n = 4096
	r := rand.New(rand.NewPCG(15, 16))
	for _, p := range []struct{ from, to Type }{{TypeQ3_K, TypeQ6_K}, {TypeQ4_0, TypeQ8_0}, {TypeQ5_0, TypeQ8_0}} {
		nb, _ := RowBytes(p.from, n)
		db, _ := RowBytes(p.to, n)
		src, dst := randBytes(r, int(nb)), make([]byte, db)
		b.Run(p.from.String(), func(b *testing.B) {
			b.SetBytes(nb)
			for b.Loop() {
				if err := Recode(p.to, dst, p.from, src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

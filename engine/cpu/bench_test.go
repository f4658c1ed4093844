package cpu_test

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/memra-ai/memra/engine/cpu"
	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/model/modeltest"
	"github.com/memra-ai/memra/gguf"
)

// benchBytes is the weight size of the bandwidth benchmarks: well past any
// cache, so they measure DRAM.
const benchBytes = 64 << 20

// benchMatrix returns a {cols, rows} matrix of about benchBytes, made by
// tiling 1 MiB of properly random data (random bit patterns could hold
// denormals, which are slow on x86 and would distort the timing).
func benchMatrix(b *testing.B, typ gguf.Type, cols int) *model.Tensor {
	b.Helper()
	rowBytes, err := gguf.RowBytes(typ, int64(cols))
	if err != nil {
		b.Fatal(err)
	}
	tileRows := max(1, (1<<20)/int(rowBytes))
	tile, err := modeltest.RandomTensor(rand.New(rand.NewPCG(1, 2)), typ, []uint64{uint64(cols), uint64(tileRows)}, modeltest.KindMatrix)
	if err != nil {
		b.Fatal(err)
	}
	rows := benchBytes / int(rowBytes)
	data := make([]byte, rows*int(rowBytes))
	for off := 0; off < len(data); off += len(tile) {
		copy(data[off:], tile)
	}
	return &model.Tensor{Name: "bench", Type: typ, Shape: []int{cols, rows}, Data: data}
}

// BenchmarkMatVec reports weight bytes read per second (b.SetBytes = matrix
// size) for the decode hot path; compare with BenchmarkMemRead.
func BenchmarkMatVec(b *testing.B) {
	for _, typ := range []gguf.Type{gguf.TypeBF16, gguf.TypeF32, gguf.TypeQ8_0, gguf.TypeF16, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ4_0, gguf.TypeIQ4_NL, gguf.TypeIQ4_XS, gguf.TypeQ3_K} {
		b.Run(typ.String(), func(b *testing.B) {
			const cols = 4096
			w := benchMatrix(b, typ, cols)
			x := make([]float32, cols)
			for i := range x {
				x[i] = float32(i%13)*0.1 - 0.6
			}
			dst := make([]float32, w.Rows())
			p := cpu.NewPool(0)
			defer p.Close()
			b.SetBytes(int64(len(w.Data)))
			b.ResetTimer()
			for b.Loop() {
				if err := cpu.MatVec(p, dst, w, x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMemRead streams benchBytes with all cores (a sum of uint64s, the
// same pool as MatVec): the practical read-bandwidth ceiling for MatVec.
func BenchmarkMemRead(b *testing.B) {
	buf := make([]uint64, benchBytes/8)
	for i := range buf {
		buf[i] = uint64(i)
	}
	p := cpu.NewPool(0)
	defer p.Close()
	sums := make([]uint64, p.Workers()*8) // one cache line per worker
	b.SetBytes(benchBytes)
	b.ResetTimer()
	for b.Loop() {
		p.Parallel(len(buf), 1<<12, func(w, lo, hi int) {
			var s0, s1, s2, s3 uint64
			for i := lo; i+4 <= hi; i += 4 {
				s0 += buf[i]
				s1 += buf[i+1]
				s2 += buf[i+2]
				s3 += buf[i+3]
			}
			sums[w*8] += s0 + s1 + s2 + s3
		})
	}
}

// BenchmarkMemcpy copies benchBytes on one goroutine (runtime memmove);
// b.SetBytes counts the bytes copied (each is read once and written once).
func BenchmarkMemcpy(b *testing.B) {
	src := make([]byte, benchBytes)
	dst := make([]byte, benchBytes)
	for i := range src {
		src[i] = byte(i)
	}
	b.SetBytes(benchBytes)
	b.ResetTimer()
	for b.Loop() {
		copy(dst, src)
	}
}

// BenchmarkDecode runs DecodeStep on a real model file:
//
//	MEMRA_BENCH_MODEL=/path/model.gguf go test -run '^$' -bench Decode ./engine/cpu/
//
// It reports tok/s and the weight bytes read per second (WeightBytes per
// token), to compare with BenchmarkMemRead.
func BenchmarkDecode(b *testing.B) {
	path := os.Getenv("MEMRA_BENCH_MODEL")
	if path == "" {
		b.Skip("set MEMRA_BENCH_MODEL to a .gguf file to benchmark decode")
	}
	m := modeltest.Open(b, path)
	be, err := cpu.New(m, cpu.Options{Ctx: 512})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	// Touch every weight once so page faults are not timed.
	if _, err := be.DecodeStep(0); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(m.WeightBytes())
	b.ResetTimer()
	n := 0
	for b.Loop() {
		if be.Len() == be.Capacity() {
			be.Reset()
		}
		if _, err := be.DecodeStep(int32(n % m.NVocab)); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "tok/s")
}

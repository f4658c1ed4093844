package gguf

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/metrics"
	"testing"
)

// allocSlack and allocFactor bound the bytes Parse may allocate for an
// input of n bytes: allocFactor·n + allocSlack. The largest ratio comes from
// metadata entries (14 bytes in the file, ~110 in memory with the index
// map) and nested empty arrays (12 bytes in the file, ~80 in memory).
const (
	allocFactor = 16
	allocSlack  = 256 << 10
)

// fuzzSeeds are small valid files made by the writer.
func fuzzSeeds(t testing.TB) [][]byte {
	var seeds [][]byte
	seeds = append(seeds, build(t, func(w *Writer) {
		for _, kv := range allValues() {
			w.SetKV(kv.Key, kv.Value)
		}
	}))
	seeds = append(seeds, build(t, func(w *Writer) {
		w.SetKV("general.architecture", StringValue("qwen35"))
		w.SetKV("general.alignment", Uint32Value(64))
		w.SetKV("qwen35.block_count", Uint32Value(2))
		w.SetKV("tokenizer.ggml.tokens", StringsValue([]string{"a", "b", "c"}))
		for i, typ := range []Type{TypeF32, TypeF16, TypeBF16, TypeQ8_0, TypeQ4_K, TypeQ6_K} {
			shape := []uint64{uint64(typ.BlockSize()), 2}
			_, nb, _ := tensorBytes(typ, shape)
			data := bytes.Repeat([]byte{byte(i + 1), 0x3c}, int(nb/2))
			w.AddTensorBytes("blk."+typ.String(), typ, shape, data)
		}
	}))
	// Version 2 with the smallest alignment: the other header layout the
	// Writer produces, and tensor data packed with no padding.
	var v2 bytes.Buffer
	w := NewWriter(&v2, 2)
	w.SetKV("general.alignment", Uint32Value(1))
	w.AddTensorBytes("a", TypeI8, []uint64{3}, []byte{1, 2, 3})
	w.AddTensorBytes("b", TypeF16, []uint64{2}, []byte{0, 0x3c, 0, 0xbc})
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	return append(seeds, v2.Bytes())
}

// refusedSeeds are valid files with one header field the reader refuses:
// each version it does not read (0, 1, a big-endian 3, 4) and an alignment
// that is not a power of two, so the fuzzer starts at those checks.
func refusedSeeds(valid []byte) [][]byte {
	var seeds [][]byte
	for _, ver := range [][4]byte{{0, 0, 0, 0}, {1, 0, 0, 0}, {0, 0, 0, 3}, {4, 0, 0, 0}} {
		b := bytes.Clone(valid)
		copy(b[4:8], ver[:])
		seeds = append(seeds, b)
	}
	b := bytes.Clone(valid)
	key := []byte("general.alignment")
	at := bytes.Index(b, key) + len(key) + 4 // past the key and the type
	b[at] = 48
	return append(seeds, b)
}

// FuzzOpen feeds mutated GGUF images to the parser: it must never panic or
// hang, must allocate at most a small multiple of the input, and whatever
// it accepts must be readable (every tensor's data, every value's text,
// dequantisation of each tensor's first block) and must round-trip through
// the Writer: written, parsed and written again, the same bytes.
func FuzzOpen(f *testing.F) {
	dir := f.TempDir()
	for i, seed := range fuzzSeeds(f) {
		path := filepath.Join(dir, "seed"+string(rune('0'+i))+".gguf")
		if err := os.WriteFile(path, seed, 0o644); err != nil {
			f.Fatal(err)
		}
		// The seed files open through mmap exactly as Parse sees them.
		if g, err := Open(path); err != nil {
			f.Fatal(err)
		} else {
			g.Close()
		}
		f.Add(seed)
	}
	for i, seed := range refusedSeeds(fuzzSeeds(f)[1]) {
		if _, err := Parse(seed); err == nil {
			f.Fatalf("refused seed %d parses", i)
		}
		f.Add(seed)
	}
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		limit := allocFactor*uint64(len(data)) + allocSlack
		g, err, used := parseMeasured(data, sample)
		// The heap counter is process-wide and the fuzz worker's own
		// goroutines allocate too: confirm a violation with the smallest
		// of three measurements.
		for try := 0; used > limit && try < 2; try++ {
			_, _, again := parseMeasured(data, sample)
			used = min(used, again)
		}
		if used > limit {
			t.Fatalf("Parse of %d bytes allocated %d bytes (limit %d)", len(data), used, limit)
		}
		if err != nil {
			return
		}
		for _, kv := range g.KVs {
			_ = kv.Value.Format(4)
		}
		_, _ = g.Uint32("block_count")
		_, _ = g.Strings("tokenizer.ggml.tokens")
		var buf [256]float32
		for i := range g.Tensors {
			ti := &g.Tensors[i]
			b, err := g.Data(ti)
			if err != nil {
				t.Fatalf("accepted tensor %q has no data: %v", ti.Name, err)
			}
			if uint64(len(b)) != ti.Bytes() {
				t.Fatalf("tensor %q: %d bytes, want %d", ti.Name, len(b), ti.Bytes())
			}
			bs, bb := ti.Type.BlockSize(), ti.Type.BlockBytes()
			if CanDequantize(ti.Type) && len(b) >= bb && bs <= len(buf) {
				if err := Dequantize(ti.Type, b[:bb], buf[:bs]); err != nil {
					t.Fatal(err)
				}
			}
		}
		// What was accepted writes back, and what it writes reads back as
		// the same file: written again, byte for byte what it was.
		first, err := writeBack(g)
		if err != nil {
			t.Fatalf("accepted file does not write back: %v", err)
		}
		g2, err := Parse(first)
		if err != nil {
			t.Fatalf("accepted file, written back, does not parse: %v", err)
		}
		if second, err := writeBack(g2); err != nil || !bytes.Equal(first, second) {
			t.Fatalf("accepted file does not read back the same (written again: %d bytes against %d, %v)", len(second), len(first), err)
		}
	})
}

// writeBack writes g's metadata and tensors through the Writer.
func writeBack(g *File) ([]byte, error) {
	var buf bytes.Buffer
	w := NewWriter(&buf, g.Version)
	for _, kv := range g.KVs {
		w.SetKV(kv.Key, kv.Value)
	}
	for i := range g.Tensors {
		ti := &g.Tensors[i]
		b, err := g.Data(ti)
		if err != nil {
			return nil, err
		}
		w.AddTensorBytes(ti.Name, ti.Type, ti.Shape, b)
	}
	err := w.Write()
	return buf.Bytes(), err
}

func parseMeasured(data []byte, sample []metrics.Sample) (*File, error, uint64) {
	metrics.Read(sample)
	before := sample[0].Value.Uint64()
	g, err := Parse(data)
	metrics.Read(sample)
	return g, err, sample[0].Value.Uint64() - before
}

package tokenizer

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkEncode measures encode throughput (MB/s, one goroutine) on
// testdata/tokenizer/bench.txt, the same 1.2 MB of mixed text that
// make_goldens.py times Hugging Face tokenizers on.
//
//	go test ./engine/tokenizer -run '^$' -bench Encode -cpu 1
//
// cold: a fresh word cache per encode (like one call on new text);
// warm: the pooled state keeps its cache between encodes.
func BenchmarkEncode(b *testing.B) {
	tok := loadQwen3(b)
	data, err := os.ReadFile(filepath.Join(testdataDir, "bench.txt"))
	if err != nil {
		b.Fatal(err)
	}
	text := string(data)
	for _, c := range []struct {
		name string
		opt  EncodeOptions
		warm bool
	}{
		{"cold", EncodeOptions{}, false},
		{"cold-nfc", EncodeOptions{NFC: true}, false},
		{"warm", EncodeOptions{}, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			var n int
			for b.Loop() {
				var ids []int32
				var err error
				if c.warm {
					ids, err = tok.Encode(text, c.opt)
				} else {
					ids, err = tok.encodeWith(newEncState(), text, c.opt)
				}
				if err != nil {
					b.Fatal(err)
				}
				n = len(ids)
			}
			b.ReportMetric(float64(n), "tokens")
		})
	}
}

func BenchmarkDecode(b *testing.B) {
	tok := loadQwen3(b)
	data, err := os.ReadFile(filepath.Join(testdataDir, "bench.txt"))
	if err != nil {
		b.Fatal(err)
	}
	ids, err := tok.Encode(string(data), EncodeOptions{})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := tok.Decode(ids); err != nil {
			b.Fatal(err)
		}
	}
}

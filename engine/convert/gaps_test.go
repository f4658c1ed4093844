package convert

import (
	"path/filepath"
	"testing"

	"github.com/memra-ai/memra/gguf"
)

// dataBytes is the sum of the tensors' data sizes in f, read from the file.
func dataBytes(t *testing.T, f *gguf.File) int64 {
	t.Helper()
	var n int64
	for _, ti := range f.Tensors {
		b, err := f.Data(&ti)
		if err != nil {
			t.Fatal(err)
		}
		n += int64(len(b))
	}
	return n
}

// progressLog records Options.Progress / SynthOptions.Progress calls.
type progressLog struct{ done, total []int64 }

func (p *progressLog) report(done, total int64) {
	p.done = append(p.done, done)
	p.total = append(p.total, total)
}

// check: the total is the same in every call and is the file's tensor data
// in bytes; done grows and ends at the total.
func (p *progressLog) check(t *testing.T, want int64) {
	t.Helper()
	if len(p.done) == 0 {
		t.Fatal("Progress never called")
	}
	if want <= 0 {
		t.Fatalf("the file holds %d bytes of tensor data", want)
	}
	for i := range p.done {
		if p.total[i] != want {
			t.Fatalf("call %d: total %d, want %d (the file's tensor data)", i, p.total[i], want)
		}
		if i > 0 && p.done[i] <= p.done[i-1] {
			t.Fatalf("call %d: done %d after %d", i, p.done[i], p.done[i-1])
		}
	}
	if last := p.done[len(p.done)-1]; last != want {
		t.Errorf("last done %d, want the total %d", last, want)
	}
}

// TestProgressTotal: the total that Convert and Synth report to Progress is
// the bytes of tensor data the file gets, so that done reaches it exactly.
// The types include a quantised one (Q8_0: 34 bytes a row of 32) and
// matrices of many rows, where a total counted per row or per tensor
// differs.
func TestProgressTotal(t *testing.T) {
	d := qwen35Dims()
	dir := t.TempDir()
	writeCheckpoint(t, dir, d, hfTensors(d, 3, DTypeBF16))
	for _, ft := range []FileType{FileF32, FileBF16, FileQ8_0} {
		t.Run("convert "+ft.String(), func(t *testing.T) {
			var p progressLog
			f, _ := convertDir(t, dir, Options{Type: ft, Progress: p.report})
			p.check(t, dataBytes(t, f))
		})
		t.Run("synth "+ft.String(), func(t *testing.T) {
			var p progressLog
			out := filepath.Join(t.TempDir(), "s.gguf")
			if err := SynthFile(t.Context(), out, SynthOptions{Preset: "tiny", Type: ft, Seed: 1, Progress: p.report}); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p.check(t, dataBytes(t, f))
		})
	}
}

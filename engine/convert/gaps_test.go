package convert

import (
	"fmt"
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

// TestRopeSectionsKey: qwen35's rope.dimension_sections is written once,
// right after attention.head_count_kv when the config gives mrope_section
// and right after rope.dimension_count when it does not (llama.cpp's order,
// spec.go's RopeSectionsFromConfig); without mrope_section the value is
// the default [11 11 10 0].
func TestRopeSectionsKey(t *testing.T) {
	d := qwen35Dims()
	for _, c := range []struct {
		name     string
		sections any // nil: no mrope_section in the config
		after    string
		want     string
	}{
		{"from config", []int{12, 10, 10}, "qwen35.attention.head_count_kv", "[12 10 10 0]"},
		{"default", nil, "qwen35.rope.dimension_count", "[11 11 10 0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeCheckpoint(t, dir, d, hfTensors(d, 4, DTypeF32))
			cfg := map[string]any{}
			readJSONInto(t, filepath.Join(dir, "config.json"), &cfg)
			rp := cfg["rope_parameters"].(map[string]any)
			delete(rp, "mrope_section")
			if c.sections != nil {
				rp["mrope_section"] = c.sections
			}
			writeJSON(t, filepath.Join(dir, "config.json"), cfg)
			f, _ := convertDir(t, dir, Options{Type: FileF32})
			const key = "qwen35.rope.dimension_sections"
			at := -1
			for i, kv := range f.KVs {
				if kv.Key != key {
					continue
				}
				if at >= 0 {
					t.Fatalf("%s written twice", key)
				}
				at = i
			}
			if at < 1 {
				t.Fatalf("%s at %d", key, at)
			}
			if prev := f.KVs[at-1].Key; prev != c.after {
				t.Errorf("%s follows %s, want %s", key, prev, c.after)
			}
			v, err := f.Int32s("rope.dimension_sections")
			if err != nil || fmt.Sprint(v) != c.want {
				t.Errorf("%s = %v, %v; want %s", key, v, err, c.want)
			}
		})
	}
}

package gguf

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// setOffset rewrites the data offset in the info of the 1-D tensor name in
// a file image the Writer made: the Writer lays tensors out one after
// another, so this is the only way to make a file whose tensors overlap.
func setOffset(t *testing.T, b []byte, name string, off uint64) {
	t.Helper()
	info := binary.LittleEndian.AppendUint64(nil, uint64(len(name)))
	info = append(info, name...)
	info = binary.LittleEndian.AppendUint32(info, 1) // n_dims
	at := bytes.Index(b, info)
	if at < 0 {
		t.Fatalf("no info of 1-D tensor %q", name)
	}
	at += len(info) + 8 + 4 // past ne[0] and the type
	binary.LittleEndian.PutUint64(b[at:], off)
}

// TestTensorOverlap: tensors whose data shares bytes are refused, naming
// the file and both tensors; gaps and empty tensors stay allowed.
func TestTensorOverlap(t *testing.T) {
	// a: 16 F32 [0, 64); b: 8 F32 [64, 96); e: empty. Alignment 32.
	file := build(t, func(w *Writer) {
		w.AddTensorBytes("a", TypeF32, []uint64{16}, make([]byte, 64))
		w.AddTensorBytes("b", TypeF32, []uint64{8}, make([]byte, 32))
		w.AddTensorBytes("e", TypeF32, []uint64{0}, nil)
	})
	cases := []struct {
		name    string
		b, e    uint64 // the offsets of b and e
		padding int    // bytes appended to the data section
		want    string // "" parses
	}{
		{"control: as written", 64, 96, 0, ""},
		{"same start", 0, 96, 0, `tensor "b": data [0, +32) overlaps the data [0, +64) of tensor "a"`},
		{"inside", 32, 96, 0, `tensor "b": data [32, +32) overlaps the data [0, +64) of tensor "a"`},
		{"control: a gap", 96, 128, 32, ""},
		{"control: empty inside another", 64, 32, 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := append(bytes.Clone(file), make([]byte, tc.padding)...)
			setOffset(t, b, "b", tc.b)
			setOffset(t, b, "e", tc.e)
			path := filepath.Join(t.TempDir(), "overlap.gguf")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			f, err := Open(path)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if ti, _ := f.Tensor("b"); ti.Offset != tc.b {
					t.Errorf("b at %d, want %d", ti.Offset, tc.b)
				}
				return
			}
			if err == nil {
				f.Close()
				t.Fatalf("parsed; want an error mentioning %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not mention %q and the file %s", err, tc.want, path)
			}
		})
	}
}

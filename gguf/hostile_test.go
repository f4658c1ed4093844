package gguf

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// img assembles a file image field by field.
type img []byte

func (b img) u32(x uint32) img  { return binary.LittleEndian.AppendUint32(b, x) }
func (b img) u64(x uint64) img  { return binary.LittleEndian.AppendUint64(b, x) }
func (b img) str(s string) img  { return append(b.u64(uint64(len(s))), s...) }
func (b img) raw(x ...byte) img { return append(b, x...) }
func (b img) pad(n int) img     { return append(b, make([]byte, n)...) }

func header(version uint32, nt, nkv uint64) img {
	return img("GGUF").u32(version).u64(nt).u64(nkv)
}

// tensorInfo appends one tensor info.
func (b img) tensorInfo(name string, typ Type, offset uint64, shape ...uint64) img {
	b = b.str(name).u32(uint32(len(shape)))
	for _, d := range shape {
		b = b.u64(d)
	}
	return b.u32(uint32(typ)).u64(offset)
}

func TestHostile(t *testing.T) {
	cases := []struct {
		name string
		data img
		want string
	}{
		{"empty", img{}, "too short"},
		{"magic", img("GGML").u32(3).u64(0).u64(0), `bad magic "GGML"`},
		{"v1", header(1, 0, 0), "GGUF v1 is not supported"},
		// Version 0 reads as 0 in either byte order: an invalid file, not
		// a big-endian one.
		{"v0", header(0, 0, 0), "GGUF version 0 is invalid"},
		{"big-endian v2", img("GGUF").raw(0, 0, 0, 2).u64(0).u64(0), "big-endian GGUF"},
		{"big-endian", img("GGUF").raw(0, 0, 0, 3).u64(0).u64(0), "big-endian GGUF"},
		{"v4", header(4, 0, 0), "unsupported GGUF version 4"},
		{"truncated counts", img("GGUF").u32(3).u64(0), "offset 16: metadata count needs 8 bytes"},
		{"kv count", header(3, 0, 1<<40), "metadata count 1099511627776 is impossible"},
		{"tensor count", header(3, 1<<40, 0), "tensor count 1099511627776 is impossible"},
		{"key length", header(3, 0, 1).u64(1 << 62).pad(8), "offset 24: metadata entry 0: key length 4611686018427387904 exceeds"},
		{"value type", header(3, 0, 1).str("k").u32(13).pad(4), `offset 33: key "k": unknown value type 13`},
		{"string length", header(3, 0, 1).str("k").u32(uint32(ValueString)).u64(100).raw('x'), `offset 37: key "k": string length 100 exceeds the 1 bytes left`},
		{"array count", header(3, 0, 1).str("tokens").u32(uint32(ValueArray)).u32(uint32(ValueString)).u64(1 << 50).pad(16),
			`offset 46: key "tokens": array count 1125899906842624 is impossible`},
		{"array u32 count", header(3, 0, 1).str("k").u32(uint32(ValueArray)).u32(uint32(ValueUint32)).u64(3).pad(11),
			`offset 41: key "k": array count 3 is impossible: 11 bytes left hold at most 2`},
		{"array elem type", header(3, 0, 1).str("k").u32(uint32(ValueArray)).u32(99).u64(0), `key "k": unknown array element type 99`},
		{"string elem", header(3, 0, 1).str("k").u32(uint32(ValueArray)).u32(uint32(ValueString)).u64(2).str("ok").u64(50).pad(2),
			`offset 59: key "k": element 1 length 50 exceeds the 2 bytes left`},
		{"nesting", nested(maxArrayDepth + 1), "arrays nested deeper than 8"},
		{"empty key", header(3, 0, 2).str("k").u32(0).raw(1).str("").u32(0).raw(1).pad(1), `offset 38: key "": empty metadata key`},
		{"dup key", header(3, 0, 2).str("k").u32(0).raw(1).str("k").u32(0).raw(1), `offset 38: key "k": duplicate metadata key`},
		{"alignment type", header(3, 0, 1).str("general.alignment").u32(uint32(ValueUint64)).u64(32), `offset 24: key "general.alignment": is uint64, want uint32`},
		{"alignment value", header(3, 0, 1).str("general.alignment").u32(uint32(ValueUint32)).u32(24), `offset 24: key "general.alignment": alignment 24 is not a power of two`},
		{"alignment zero", header(3, 0, 2).str("a").u32(uint32(ValueUint8)).raw(1).str("general.alignment").u32(uint32(ValueUint32)).u32(0),
			`offset 38: key "general.alignment": alignment 0 is not a power of two`},
		{"dims", header(3, 1, 0).tensorInfo("w", TypeF32, 0, 1, 1, 1, 1, 1).pad(64), `offset 33: tensor "w": 5 dims, at most 4 allowed`},
		{"truncated info", header(3, 1, 0).str("w").u32(2).u64(4).pad(8), `offset 37: tensor "w": info needs 28 bytes`},
		{"overflow", header(3, 1, 0).tensorInfo("w", TypeF32, 0, 1<<31, 1<<31, 1<<31).pad(64), `tensor "w": shape [2147483648 2147483648 2147483648] overflows`},
		{"bytes overflow", header(3, 1, 0).tensorInfo("w", TypeF64, 0, 1<<60).pad(64), `tensor "w": shape [1152921504606846976] of F64 overflows`},
		{"unknown type", header(3, 1, 0).tensorInfo("w", Type(77), 0, 4).pad(64), `offset 24: tensor "w": unknown type type(77)`},
		{"removed type", header(3, 1, 0).tensorInfo("w", TypeQ4_0_4_4, 0, 32).pad(64), `offset 24: tensor "w": removed type Q4_0_4_4`},
		{"block", header(3, 1, 0).tensorInfo("w", TypeQ4_K, 0, 100).pad(200), `tensor "w": row length 100 is not a multiple of the Q4_K block size 256`},
		{"misaligned", header(3, 1, 0).tensorInfo("w", TypeF32, 4, 1).pad(64), `tensor "w": data offset 4 is not a multiple of the alignment 32`},
		{"past end", header(3, 1, 0).tensorInfo("w", TypeF32, 0, 100).pad(64), `tensor "w": data [0, +400) runs past the end`},
		{"offset past end", header(3, 1, 0).tensorInfo("w", TypeF32, 1<<63, 1).pad(64), `tensor "w": data [9223372036854775808, +4) runs past the end`},
		{"no data section", header(3, 1, 0).tensorInfo("w", TypeF32, 0, 1), "offset 57: data section at 64 lies beyond the end of the file (57 bytes)"},
		// ggml's 64-byte name buffer holds 63 bytes and a NUL; llama.cpp
		// refuses a file with a longer name.
		{"long name", header(3, 1, 0).tensorInfo(strings.Repeat("n", MaxTensorName+1), TypeF32, 0, 1).pad(64),
			`offset 24: tensor "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn": name is 64 bytes, at most 63 allowed`},
		{"dup tensor", header(3, 2, 0).tensorInfo("w", TypeF32, 0, 1).tensorInfo("w", TypeF32, 32, 1).pad(64), `offset 57: tensor "w": duplicate tensor name`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.data)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v\nwant it to contain %q", err, c.want)
			}
		})
	}
}

// nested returns a file whose one key holds arrays nested depth deep.
func nested(depth int) img {
	b := header(3, 0, 1).str("deep").u32(uint32(ValueArray))
	for range depth - 1 {
		b = b.u32(uint32(ValueArray)).u64(1)
	}
	return b.u32(uint32(ValueUint8)).u64(1).raw(5)
}

func TestNestingLimit(t *testing.T) {
	f, err := Parse(nested(maxArrayDepth))
	if err != nil {
		t.Fatalf("depth %d: %v", maxArrayDepth, err)
	}
	v, _ := f.Lookup("deep")
	for range maxArrayDepth - 1 {
		v = v.Index(0)
	}
	if x, _ := v.Index(0).Uint64(); x != 5 {
		t.Errorf("innermost value %d, want 5", x)
	}
}

func TestOpenErrorsNameFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bad.gguf")
	if err := os.WriteFile(path, header(1, 0, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "v1") {
		t.Errorf("error %v should name %s and v1", err, path)
	}
	_, err = Open(filepath.Join(dir, "missing.gguf"))
	if err == nil || !strings.Contains(err.Error(), "missing.gguf") {
		t.Errorf("error %v should name the file", err)
	}
	short := filepath.Join(dir, "short.gguf")
	if err := os.WriteFile(short, []byte("GG"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(short); err == nil || !strings.Contains(err.Error(), "too short") {
		t.Errorf("error %v, want too short", err)
	}
	// A directory where a file was meant: said so, not mmap's "no such device".
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), dir+" is a directory") {
		t.Errorf("error %v, want one saying %s is a directory", err, dir)
	}
	// A device or pipe (memra info /dev/stdin): said so, not "0 bytes".
	if _, err := os.Stat("/dev/null"); err == nil {
		if _, err := Open("/dev/null"); err == nil || !strings.Contains(err.Error(), "/dev/null is not a regular file") {
			t.Errorf("error %v, want one saying /dev/null is not a regular file", err)
		}
	}
}

// TestBoundaries pins every length check at its edge: each image parses as
// it is, and the same image one byte shorter fails with the error that
// names the check. TestHostile's cases miss by whole fields, so an
// off-by-one in a check (> for >=, remaining()+1) passed it. The cut images
// keep the capacity of the full ones, so a check that lets one byte too
// many through reads past len(data) instead of panicking.
func TestBoundaries(t *testing.T) {
	cases := []struct {
		name string
		data img
		want string // error for data[:len(data)-1]
	}{
		// 57 bytes of header and info, data section at 64, 8 bytes of data.
		{"tensor data", header(3, 1, 0).tensorInfo("w", TypeF32, 0, 2).pad(7).pad(8),
			`offset 24: tensor "w": data [0, +8) runs past the end of the data section (7 bytes at file offset 64)`},
		{"tensor at an offset", header(3, 1, 0).tensorInfo("w", TypeF32, 32, 1).pad(7).pad(36),
			`offset 24: tensor "w": data [32, +4) runs past the end of the data section (35 bytes at file offset 64)`},
		{"string value", header(3, 0, 1).str("k").u32(uint32(ValueString)).str("abcd"),
			`offset 37: key "k": string length 4 exceeds the 3 bytes left`},
		{"string element", header(3, 0, 1).str("k").u32(uint32(ValueArray)).u32(uint32(ValueString)).u64(2).str("ab").str("cd"),
			`offset 59: key "k": element 1 length 2 exceeds the 1 bytes left`},
		{"u32 array", header(3, 0, 1).str("k").u32(uint32(ValueArray)).u32(uint32(ValueUint32)).u64(3).pad(12),
			`offset 41: key "k": array count 3 is impossible: 11 bytes left hold at most 2`},
		// The smallest entry: a 1-byte key, type, one byte of value.
		{"metadata count", header(3, 0, 1).str("k").u32(uint32(ValueUint8)).raw(7),
			"offset 16: metadata count 1 is impossible: 13 bytes left hold at most 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Parse(c.data); err != nil {
				t.Fatalf("the exact-fit image: %v", err)
			}
			_, err := Parse(c.data[:len(c.data)-1])
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("one byte short: error %v\nwant it to contain %q", err, c.want)
			}
		})
	}
	// A tensor one alignment step past a 31-byte data section: its offset
	// alone is out of range (offset−avail must not wrap around).
	past := header(3, 1, 0).tensorInfo("w", TypeF32, 32, 1).pad(7).pad(31)
	if _, err := Parse(past); err == nil || !strings.Contains(err.Error(), `tensor "w": data [32, +4) runs past the end`) {
		t.Errorf("tensor past a 31-byte data section: error %v", err)
	}
}

// TestDataChecksRange: Data checks a TensorInfo the caller changed after
// Parse (Tensors is exported) against the image, to the byte.
func TestDataChecksRange(t *testing.T) {
	f, err := Parse(header(3, 1, 0).tensorInfo("w", TypeF32, 0, 2).pad(7).pad(8))
	if err != nil {
		t.Fatal(err)
	}
	ti := f.Tensors[0]
	ti.Offset = 4 // [68, 76) ends 4 bytes past the 72-byte image
	if b, err := f.Data(&ti); err == nil || !strings.Contains(err.Error(), `tensor "w": data out of range`) {
		t.Errorf("offset 4: %d bytes, error %v; want data out of range", len(b), err)
	}
	ti.Type, ti.Shape = TypeI8, []uint64{5} // [68, 73): one byte past
	if b, err := f.Data(&ti); err == nil || !strings.Contains(err.Error(), `tensor "w": data out of range`) {
		t.Errorf("5 bytes at 68: %d bytes, error %v; want data out of range", len(b), err)
	}
	ti.Shape = []uint64{4} // [68, 72): the last 4 bytes
	if b, err := f.Data(&ti); err != nil || len(b) != 4 {
		t.Errorf("4 bytes at 68: %d bytes, error %v", len(b), err)
	}
}

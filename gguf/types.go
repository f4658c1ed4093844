package gguf

import (
	"fmt"
	"math/bits"
)

// Type is a ggml tensor element type, as stored in a GGUF tensor info.
// The numbering is ggml's enum ggml_type; ids are never reused, so removed
// types keep their slot.
type Type uint32

// ggml tensor types. Ids 4, 5 (Q4_2, Q4_3) and 31–33, 36–38 (CPU repacked
// layouts) were removed from ggml and are rejected when found in a file.
const (
	TypeF32        Type = 0
	TypeF16        Type = 1
	TypeQ4_0       Type = 2
	TypeQ4_1       Type = 3
	TypeQ4_2       Type = 4 // removed from ggml
	TypeQ4_3       Type = 5 // removed from ggml
	TypeQ5_0       Type = 6
	TypeQ5_1       Type = 7
	TypeQ8_0       Type = 8
	TypeQ8_1       Type = 9
	TypeQ2_K       Type = 10
	TypeQ3_K       Type = 11
	TypeQ4_K       Type = 12
	TypeQ5_K       Type = 13
	TypeQ6_K       Type = 14
	TypeQ8_K       Type = 15
	TypeIQ2_XXS    Type = 16
	TypeIQ2_XS     Type = 17
	TypeIQ3_XXS    Type = 18
	TypeIQ1_S      Type = 19
	TypeIQ4_NL     Type = 20
	TypeIQ3_S      Type = 21
	TypeIQ2_S      Type = 22
	TypeIQ4_XS     Type = 23
	TypeI8         Type = 24
	TypeI16        Type = 25
	TypeI32        Type = 26
	TypeI64        Type = 27
	TypeF64        Type = 28
	TypeIQ1_M      Type = 29
	TypeBF16       Type = 30
	TypeQ4_0_4_4   Type = 31 // removed from GGUF files (CPU repacking is done at load time now)
	TypeQ4_0_4_8   Type = 32 // removed from GGUF files
	TypeQ4_0_8_8   Type = 33 // removed from GGUF files
	TypeTQ1_0      Type = 34
	TypeTQ2_0      Type = 35
	TypeIQ4_NL_4_4 Type = 36 // removed from GGUF files
	TypeIQ4_NL_4_8 Type = 37 // removed from GGUF files
	TypeIQ4_NL_8_8 Type = 38 // removed from GGUF files
	TypeMXFP4      Type = 39
	TypeNVFP4      Type = 40 // 4 UE4M3 scales + 64 e2m1 nibbles
	TypeQ1_0       Type = 41 // f16 d + 128 sign bits
	TypeQ2_0       Type = 42 // f16 d + 64 2-bit values (newest ggml)

	// NumTypes is one past the largest type id this package knows.
	NumTypes = 43
)

// typeInfo describes the storage of one ggml type: elements are stored in
// blocks of blockSize elements taking blockBytes bytes each.
type typeInfo struct {
	name       string
	blockSize  int
	blockBytes int
	removed    bool // the id is reserved but ggml no longer reads it from files
	quantized  bool
}

// typeTable is indexed by Type. Block sizes and byte counts follow the block
// structs in ggml-common.h (QK_K = 256).
var typeTable = [NumTypes]typeInfo{
	TypeF32:        {"F32", 1, 4, false, false},
	TypeF16:        {"F16", 1, 2, false, false},
	TypeQ4_0:       {"Q4_0", 32, 18, false, true},     // f16 d; 16 B nibbles
	TypeQ4_1:       {"Q4_1", 32, 20, false, true},     // f16 d, m; 16 B nibbles
	TypeQ4_2:       {"Q4_2", 0, 0, true, true},        // removed in 2023
	TypeQ4_3:       {"Q4_3", 0, 0, true, true},        // removed in 2023
	TypeQ5_0:       {"Q5_0", 32, 22, false, true},     // f16 d; 4 B high bits; 16 B nibbles
	TypeQ5_1:       {"Q5_1", 32, 24, false, true},     // f16 d, m; 4 B high bits; 16 B nibbles
	TypeQ8_0:       {"Q8_0", 32, 34, false, true},     // f16 d; 32 int8
	TypeQ8_1:       {"Q8_1", 32, 36, false, true},     // f16 d, s; 32 int8
	TypeQ2_K:       {"Q2_K", 256, 84, false, true},    // 16 scales, 64 qs, f16 d, dmin
	TypeQ3_K:       {"Q3_K", 256, 110, false, true},   // 32 hmask, 64 qs, 12 scales, f16 d
	TypeQ4_K:       {"Q4_K", 256, 144, false, true},   // f16 d, dmin, 12 scales, 128 qs
	TypeQ5_K:       {"Q5_K", 256, 176, false, true},   // f16 d, dmin, 12 scales, 32 qh, 128 qs
	TypeQ6_K:       {"Q6_K", 256, 210, false, true},   // 128 ql, 64 qh, 16 int8 scales, f16 d
	TypeQ8_K:       {"Q8_K", 256, 292, false, true},   // f32 d, 256 int8, 16 int16 bsums
	TypeIQ2_XXS:    {"IQ2_XXS", 256, 66, false, true}, // f16 d, 32 uint16
	TypeIQ2_XS:     {"IQ2_XS", 256, 74, false, true},  // f16 d, 32 uint16, 8 scales
	TypeIQ3_XXS:    {"IQ3_XXS", 256, 98, false, true}, // f16 d, 96 B
	TypeIQ1_S:      {"IQ1_S", 256, 50, false, true},   // f16 d, 32 qs, 8 uint16 qh
	TypeIQ4_NL:     {"IQ4_NL", 32, 18, false, true},   // f16 d, 16 B nibbles
	TypeIQ3_S:      {"IQ3_S", 256, 110, false, true},  // f16 d, 64 qs, 8 qh, 32 signs, 4 scales
	TypeIQ2_S:      {"IQ2_S", 256, 82, false, true},   // f16 d, 64 qs, 8 qh, 8 scales
	TypeIQ4_XS:     {"IQ4_XS", 256, 136, false, true}, // f16 d, u16 scales_h, 4 scales_l, 128 qs
	TypeI8:         {"I8", 1, 1, false, false},
	TypeI16:        {"I16", 1, 2, false, false},
	TypeI32:        {"I32", 1, 4, false, false},
	TypeI64:        {"I64", 1, 8, false, false},
	TypeF64:        {"F64", 1, 8, false, false},
	TypeIQ1_M:      {"IQ1_M", 256, 56, false, true},    // 32 qs, 16 qh, 8 scales
	TypeBF16:       {"BF16", 1, 2, false, false},       //
	TypeQ4_0_4_4:   {"Q4_0_4_4", 32, 18, true, true},   // removed from files
	TypeQ4_0_4_8:   {"Q4_0_4_8", 32, 18, true, true},   // removed from files
	TypeQ4_0_8_8:   {"Q4_0_8_8", 32, 18, true, true},   // removed from files
	TypeTQ1_0:      {"TQ1_0", 256, 54, false, true},    // 48 qs, 4 qh, f16 d
	TypeTQ2_0:      {"TQ2_0", 256, 66, false, true},    // 64 qs, f16 d
	TypeIQ4_NL_4_4: {"IQ4_NL_4_4", 32, 18, true, true}, // removed from files
	TypeIQ4_NL_4_8: {"IQ4_NL_4_8", 32, 18, true, true}, // removed from files
	TypeIQ4_NL_8_8: {"IQ4_NL_8_8", 32, 18, true, true}, // removed from files
	TypeMXFP4:      {"MXFP4", 32, 17, false, true},     // e8m0 scale, 16 B e2m1 nibbles
	TypeNVFP4:      {"NVFP4", 64, 36, false, true},     // 4 B ue4m3 scales, 32 B e2m1 nibbles
	TypeQ1_0:       {"Q1_0", 128, 18, false, true},     // f16 d, 16 B sign bits
	TypeQ2_0:       {"Q2_0", 64, 18, false, true},      // f16 d, 16 B 2-bit values
}

func (t Type) info() (typeInfo, bool) {
	if int(t) >= len(typeTable) {
		return typeInfo{}, false
	}
	return typeTable[t], true
}

// String returns ggml's name of the type ("Q4_K", "BF16"), or "type(N)" for
// ids this package does not know.
func (t Type) String() string {
	if ti, ok := t.info(); ok {
		return ti.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockSize is the number of elements in one storage block (1 for plain
// types, 32 or 256 for quantized ones; 0 for unknown or removed types).
func (t Type) BlockSize() int {
	ti, _ := t.info()
	return ti.blockSize
}

// BlockBytes is the number of bytes one storage block takes (0 for unknown
// or removed types).
func (t Type) BlockBytes() int {
	ti, _ := t.info()
	return ti.blockBytes
}

// Valid reports whether t is a type a GGUF file may hold: known and not
// removed from ggml.
func (t Type) Valid() bool {
	ti, ok := t.info()
	return ok && !ti.removed && ti.blockSize > 0
}

// Removed reports whether t is a reserved id ggml no longer accepts in files.
func (t Type) Removed() bool {
	ti, ok := t.info()
	return ok && ti.removed
}

// Quantized reports whether t stores blocks with scales (everything except
// the plain float and integer types).
func (t Type) Quantized() bool {
	ti, _ := t.info()
	return ti.quantized
}

// TypeByName returns the type with ggml's name (case-sensitive, e.g. "Q8_0").
func TypeByName(name string) (Type, bool) {
	for i, ti := range typeTable {
		if ti.name == name {
			return Type(i), true
		}
	}
	return 0, false
}

// RowBytes returns the bytes n consecutive elements of type t take. n must
// be a multiple of the block size.
func RowBytes(t Type, n int64) (int64, error) {
	if !t.Valid() {
		return 0, fmt.Errorf("gguf: unsupported tensor type %v", t)
	}
	if n < 0 {
		return 0, fmt.Errorf("gguf: negative element count %d", n)
	}
	bs := int64(t.BlockSize())
	if n%bs != 0 {
		return 0, fmt.Errorf("gguf: %d elements of %v is not a multiple of the block size %d", n, t, bs)
	}
	hi, lo := bits.Mul64(uint64(n/bs), uint64(t.BlockBytes()))
	if hi != 0 || lo > 1<<62 {
		return 0, fmt.Errorf("gguf: %d elements of %v overflow", n, t)
	}
	return int64(lo), nil
}

// tensorBytes returns the bytes of a tensor with the given ggml shape
// (ne order: shape[0] is the contiguous row length), checking the row length
// is a whole number of blocks and that nothing overflows int64.
func tensorBytes(t Type, shape []uint64) (elems, nbytes uint64, err error) {
	if !t.Valid() {
		return 0, 0, fmt.Errorf("unsupported tensor type %v", t)
	}
	const limit = 1 << 62
	elems = 1
	for i, d := range shape {
		if d >= limit {
			return 0, 0, fmt.Errorf("dimension %d is %d, too large", i, d)
		}
		hi, lo := bits.Mul64(elems, d)
		if hi != 0 || lo >= limit {
			return 0, 0, fmt.Errorf("shape %v overflows", shape)
		}
		elems = lo
	}
	bs := uint64(t.BlockSize())
	row := uint64(1)
	if len(shape) > 0 {
		row = shape[0]
	}
	if row%bs != 0 {
		return 0, 0, fmt.Errorf("row length %d is not a multiple of the %v block size %d", row, t, bs)
	}
	hi, lo := bits.Mul64(elems/bs, uint64(t.BlockBytes()))
	if hi != 0 || lo >= limit {
		return 0, 0, fmt.Errorf("shape %v of %v overflows", shape, t)
	}
	return elems, lo, nil
}

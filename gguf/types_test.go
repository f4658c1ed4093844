package gguf

import "testing"

// TestTypeTable checks the table against ggml's enum ggml_type and the
// block structs of ggml-common.h, restated here by hand.
func TestTypeTable(t *testing.T) {
	want := []struct {
		id     Type
		name   string
		bs, bb int
		valid  bool
	}{
		{0, "F32", 1, 4, true}, {1, "F16", 1, 2, true}, {2, "Q4_0", 32, 18, true}, {3, "Q4_1", 32, 20, true},
		{4, "Q4_2", 0, 0, false}, {5, "Q4_3", 0, 0, false},
		{6, "Q5_0", 32, 22, true}, {7, "Q5_1", 32, 24, true}, {8, "Q8_0", 32, 34, true}, {9, "Q8_1", 32, 36, true},
		{10, "Q2_K", 256, 84, true}, {11, "Q3_K", 256, 110, true}, {12, "Q4_K", 256, 144, true},
		{13, "Q5_K", 256, 176, true}, {14, "Q6_K", 256, 210, true}, {15, "Q8_K", 256, 292, true},
		{16, "IQ2_XXS", 256, 66, true}, {17, "IQ2_XS", 256, 74, true}, {18, "IQ3_XXS", 256, 98, true},
		{19, "IQ1_S", 256, 50, true}, {20, "IQ4_NL", 32, 18, true}, {21, "IQ3_S", 256, 110, true},
		{22, "IQ2_S", 256, 82, true}, {23, "IQ4_XS", 256, 136, true},
		{24, "I8", 1, 1, true}, {25, "I16", 1, 2, true}, {26, "I32", 1, 4, true}, {27, "I64", 1, 8, true},
		{28, "F64", 1, 8, true}, {29, "IQ1_M", 256, 56, true}, {30, "BF16", 1, 2, true},
		{31, "Q4_0_4_4", 32, 18, false}, {32, "Q4_0_4_8", 32, 18, false}, {33, "Q4_0_8_8", 32, 18, false},
		{34, "TQ1_0", 256, 54, true}, {35, "TQ2_0", 256, 66, true},
		{36, "IQ4_NL_4_4", 32, 18, false}, {37, "IQ4_NL_4_8", 32, 18, false}, {38, "IQ4_NL_8_8", 32, 18, false},
		{39, "MXFP4", 32, 17, true}, {40, "NVFP4", 64, 36, true}, {41, "Q1_0", 128, 18, true}, {42, "Q2_0", 64, 18, true},
	}
	if len(want) != NumTypes {
		t.Fatalf("table has %d rows, NumTypes is %d", len(want), NumTypes)
	}
	for _, w := range want {
		ty := w.id
		if ty.String() != w.name || ty.Valid() != w.valid {
			t.Errorf("type %d: %s valid=%v, want %s valid=%v", w.id, ty, ty.Valid(), w.name, w.valid)
		}
		if w.valid && (ty.BlockSize() != w.bs || ty.BlockBytes() != w.bb) {
			t.Errorf("%s: block %d elements / %d bytes, want %d / %d", w.name, ty.BlockSize(), ty.BlockBytes(), w.bs, w.bb)
		}
		if !w.valid && !ty.Removed() {
			t.Errorf("%s should be marked removed", w.name)
		}
		if got, ok := TypeByName(w.name); !ok || got != ty {
			t.Errorf("TypeByName(%q) = %v %v", w.name, got, ok)
		}
	}
	if Type(99).String() != "type(99)" || Type(99).Valid() {
		t.Error("unknown type 99")
	}
}

func TestRowBytes(t *testing.T) {
	cases := []struct {
		typ  Type
		n    int64
		want int64
	}{
		{TypeF32, 5, 20}, {TypeBF16, 3, 6}, {TypeQ8_0, 64, 68}, {TypeQ4_K, 512, 288}, {TypeQ6_K, 4096, 3360},
	}
	for _, c := range cases {
		got, err := RowBytes(c.typ, c.n)
		if err != nil || got != c.want {
			t.Errorf("RowBytes(%v, %d) = %d, %v; want %d", c.typ, c.n, got, err, c.want)
		}
	}
	if _, err := RowBytes(TypeQ8_0, 33); err == nil {
		t.Error("RowBytes accepted a partial block")
	}
	if _, err := RowBytes(TypeQ4_3, 32); err == nil {
		t.Error("RowBytes accepted a removed type")
	}
}

package main

import (
	"os"
	"strings"
	"testing"
)

// TestVariantNames checks that every variant main.go times is defined in
// mvexp.cu and parses to a geometry the kernels can have: a typo would
// otherwise surface only on the GPU machine, as a missing function.
func TestVariantNames(t *testing.T) {
	src, err := os.ReadFile("mvexp.cu")
	if err != nil {
		t.Fatal(err)
	}
	cu := string(src)
	for _, v := range parseVariants(expNames) {
		if v.r <= 0 || v.kw <= 0 || 8%v.kw != 0 {
			t.Errorf("%s: parsed R %d KW %d", v.name, v.r, v.kw)
		}
		// mvx_ names appear as macro calls BF(R, KW, U, XS) / Q8(R, KW, U),
		// mvg_ names as MVG_BF / MVG_Q8(R, KW, U, TB, PF) / MVG_Q8B(R, KW, U, TB, PF, B).
		var call string
		f := strings.Split(v.name, "_")
		num := func(s string) string { return s[1:] }
		switch {
		case v.mvg && v.q8 && len(f) == 8:
			call = "MVG_Q8B(" + strings.Join([]string{num(f[2]), num(f[3]), num(f[4]), num(f[5]), num(f[6]), num(f[7])}, ", ") + ")"
		case v.mvg && v.q8:
			call = "MVG_Q8(" + strings.Join([]string{num(f[2]), num(f[3]), num(f[4]), num(f[5]), num(f[6])}, ", ") + ")"
		case v.mvg:
			call = "MVG_BF(" + strings.Join([]string{num(f[2]), num(f[3]), num(f[4]), num(f[5]), num(f[6])}, ", ") + ")"
		case v.q8:
			call = "Q8(" + strings.Join([]string{num(f[2]), num(f[3]), num(f[4])}, ", ") + ")"
		default:
			call = "BF(" + strings.Join([]string{num(f[2]), num(f[3]), num(f[4]), num(f[5])}, ", ") + ")"
		}
		if !strings.Contains(cu, "\n"+call) {
			t.Errorf("%s: mvexp.cu has no %s", v.name, call)
		}
	}
}

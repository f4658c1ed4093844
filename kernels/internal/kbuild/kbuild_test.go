package kbuild

import (
	"strings"
	"testing"
)

func TestStale(t *testing.T) {
	m := Manifest{Sources: map[string]string{"a.cu": "1", "b.cu": "2", "gone.cu": "3"}}
	msgs := Stale(m, map[string]string{"a.cu": "1", "b.cu": "9", "new.cu": "4"}, "kernels")
	want := []string{"kernels/b.cu changed", "kernels/new.cu is new", "kernels/gone.cu was removed"}
	if len(msgs) != len(want) {
		t.Fatalf("Stale = %q, want %d messages", msgs, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(msgs[i], w) || !strings.Contains(msgs[i], "go tool mage cuda:kernels") {
			t.Errorf("message %d = %q, want prefix %q and the fix", i, msgs[i], w)
		}
	}
	if s := Stale(m, m.Sources, "kernels"); len(s) != 0 {
		t.Errorf("Stale of identical hashes = %q", s)
	}
}

func TestParsePtxas(t *testing.T) {
	out := `ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k1' for 'sm_80'
ptxas info    : Function properties for k1
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 99 registers, 352 bytes cmem[0]
ptxas info    : Compiling entry function 'k1' for 'sm_90'
ptxas info    : Function properties for k1
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, 1024 bytes smem, 352 bytes cmem[0]
ptxas info    : Compiling entry function 'k2' for 'sm_90'
ptxas info    : Function properties for k2
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, 352 bytes cmem[0]
`
	r, err := ParsePtxas(out, "sm_90")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]KernelInfo{
		"k1": {Registers: 40, SharedBytes: 1024, StackBytes: 8, SpillStores: 4, SpillLoads: 12},
		"k2": {Registers: 12},
	}
	if len(r) != len(want) || r["k1"] != want["k1"] || r["k2"] != want["k2"] {
		t.Errorf("ParsePtxas = %+v, want %+v", r, want)
	}
	if _, err := ParsePtxas(out, "sm_86"); err == nil {
		t.Error("no sm_86 entries, but no error")
	}
}

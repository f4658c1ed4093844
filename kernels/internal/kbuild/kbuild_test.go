package kbuild

import (
	"fmt"
	"reflect"
	"slices"
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
ptxas info    : Compiling entry function 'k3' for 'sm_90'
ptxas info    : Function properties for k3
    40 bytes stack frame, 38 bytes spill stores, 64 bytes spill loads
ptxas info    : Used 64 registers, used 1 barriers, 288 bytes smem, 400 bytes cmem[0]
ptxas info    : Compile time = 12.345 ms
ptxas info    : Compiling entry function 'k4' for 'sm_90'
ptxas info    : Function properties for k4
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 96 registers, used 1 barriers, 64 bytes cumulative stack size, 2048 bytes smem, 400 bytes cmem[0]
`
	r, err := ParsePtxas(out, "sm_90")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]KernelInfo{
		"k1": {Registers: 40, SharedBytes: 1024, StackBytes: 8, SpillStores: 4, SpillLoads: 12},
		"k2": {Registers: 12},
		// ptxas 12 and later (nvcc 13 in run276) name the barriers too.
		"k3": {Registers: 64, SharedBytes: 288, StackBytes: 40, SpillStores: 38, SpillLoads: 64},
		// A cumulative stack size before the shared memory (another ptxas).
		"k4": {Registers: 96, SharedBytes: 2048},
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("ParsePtxas = %+v, want %+v", r, want)
	}
	if _, err := ParsePtxas(out, "sm_86"); err == nil {
		t.Error("no sm_86 entries, but no error")
	}
}

// TestParseSASS: a listing in cuobjdump's layout (address comment,
// instruction, encoding comments) with two functions. In f1 the branch at
// 0x40 jumps back to 0x10 (a loop of 4 instructions: 0x10..0x40), the one at
// 0x60 forward, the one at 0x70 to itself (the trap that ends a function);
// f2's backward branch closes a loop of 101 instructions (0x0000..0x0640),
// which is the one long enough for the manifest.
func TestParseSASS(t *testing.T) {
	var b strings.Builder
	b.WriteString("\nFatbin elf code:\n================\narch = sm_90\n\n\tcode for sm_90\n\t\tFunction : f1\n")
	b.WriteString("\t.headerflags    @\"EF_CUDA_SM90 EF_CUDA_PTX_SM(EF_CUDA_SM90)\"\n")
	for _, l := range []string{
		"        /*0000*/                   LDC R1, c[0x0][0x28] ;                 /* 0x00000a00ff017b82 */",
		"                                                                          /* 0x000e300000000800 */",
		"        /*0010*/                   IADD3 R1, R1, -0x30, RZ ;              /* 0xffffffd001017810 */",
		"        /*0020*/                   LDG.E R2, [R4.64] ;                    /* 0x0000000004027981 */",
		"        /*0030*/                   FFMA R0, R2, R3, R0 ;                  /* 0x0000000302007223 */",
		"        /*0040*/              @!P0 BRA 0x10 ;                             /* 0xfffffffc00f08947 */",
		"        /*0050*/                   STG.E [R6.64], R0 ;                    /* 0x0000000006007986 */",
		"        /*0060*/               @P1 BRA 0x80 ;                             /* 0x0000000000041947 */",
		"        /*0070*/                   BRA 0x70 ;                             /* 0xfffffff000007947 */",
		"        /*0080*/                   EXIT ;                                 /* 0x000000000000794d */",
		"\t\t..........",
		"\t\tFunction : f2",
	} {
		b.WriteString(l + "\n")
	}
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&b, "        /*%04x*/                   FFMA R0, R2, R3, R0 ;  /* 0x0 */\n", i*16)
	}
	b.WriteString("        /*0640*/               @P0 BRA 0x0 ;  /* 0x0 */\n        /*0650*/                   EXIT ;  /* 0x0 */\n")
	got, err := ParseSASS(b.String())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]SASSInfo{"f1": {Instructions: 9}, "f2": {Instructions: 102, Loops: []int{101}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseSASS = %+v, want %+v", got, want)
	}
	if _, err := ParseSASS("no listing"); err == nil {
		t.Error("a listing without functions gave no error")
	}
}

func TestDiffSASS(t *testing.T) {
	// An instruction "TEXT#W" is listed with the second encoding word W on
	// the next line, as cuobjdump lists them; the first word is made from its
	// position.
	listing := func(archs map[string]map[string][]string) string {
		var b strings.Builder
		for _, arch := range []string{"sm_80", "sm_90"} {
			fns, ok := archs[arch]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "\nFatbin elf code:\n================\narch = %s\n\n\tcode for %s\n", arch, arch)
			for _, fn := range []string{"a", "b", "c"} {
				code, ok := fns[fn]
				if !ok {
					continue
				}
				fmt.Fprintf(&b, "\t\tFunction : %s\n", fn)
				for i, in := range code {
					text, w, _ := strings.Cut(in, "#")
					fmt.Fprintf(&b, "        /*%04x*/                   %s ;   /* 0x%016x */\n", 16*i, text, 1000*i)
					if w != "" {
						fmt.Fprintf(&b, "                                             /* 0x%016s */\n", w)
					}
				}
			}
		}
		return b.String()
	}
	old := map[string]map[string][]string{
		"sm_80": {"a": {"IADD3 R1, R1, 0x1, RZ#1", "EXIT#2"}, "b": {"EXIT"}},
		"sm_90": {"a": {"IADD3 R1, R1, 0x1, RZ", "EXIT"}, "b": {"FFMA R0, R2,  R3, R0", "EXIT"}},
	}
	cur := map[string]map[string][]string{
		// a on sm_80: the same text, another control word (a stall count).
		"sm_80": {"a": {"IADD3 R1, R1, 0x1, RZ#1", "EXIT#3"}, "b": {"EXIT"}},
		// b: another register; c: new.
		"sm_90": {"a": {"IADD3 R1, R1, 0x1, RZ", "EXIT"}, "b": {"FFMA R4, R2, R3, R0", "EXIT"}, "c": {"EXIT"}},
	}
	o, err := SASSCode(listing(old))
	if err != nil {
		t.Fatal(err)
	}
	n, err := SASSCode(listing(cur))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := o["sm_90"]["b"], []string{"FFMA R0, R2, R3, R0 0x0000000000000000", "EXIT 0x00000000000003e8"}; !slices.Equal(got, want) {
		t.Errorf("sm_90 b = %q, want %q: the instructions, spaces folded, with their encoding but no address", got, want)
	}
	if got, want := o["sm_80"]["a"][1], "EXIT 0x00000000000003e8 0x0000000000000002"; got != want {
		t.Errorf("sm_80 a's second instruction = %q, want %q (both encoding words)", got, want)
	}
	changed, same := DiffSASS(o, n)
	want := []SASSChange{{"sm_80", "a", 2, 2}, {"sm_90", "b", 2, 2}, {"sm_90", "c", -1, 1}}
	if !reflect.DeepEqual(changed, want) || same != 2 {
		t.Errorf("DiffSASS = %+v, %d the same; want %+v, 2", changed, same, want)
	}
	if _, err := SASSCode("no listing"); err == nil {
		t.Error("a listing without functions gave no error")
	}
	if _, err := SASSCode(listing(old) + listing(old)); err == nil {
		t.Error("a function listed twice for one architecture gave no error")
	}
}

func TestFlagsFor(t *testing.T) {
	if !slices.Equal(FlagsFor(), Flags()) {
		t.Errorf("FlagsFor() = %q, want Flags() %q", FlagsFor(), Flags())
	}
	all := strings.Join(Flags(), " ")
	for _, sm := range Archs() {
		if !strings.Contains(all, "code=sm_"+sm) {
			t.Errorf("Flags() has no SASS for sm_%s: %s", sm, all)
		}
	}
	if !strings.Contains(all, "code=compute_90") {
		t.Errorf("Flags() has no PTX: %s", all)
	}
	one := strings.Join(FlagsFor("90"), " ")
	if !strings.Contains(one, "arch=compute_90,code=sm_90") || strings.Contains(one, "sm_80") || strings.Contains(one, "code=compute_90") {
		t.Errorf("FlagsFor(90) = %s, want sm_90 SASS alone", one)
	}
}

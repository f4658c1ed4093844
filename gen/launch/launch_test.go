package launch

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	golden_ "github.com/memra-ai/memra/gen/internal/golden"

	"github.com/memra-ai/memra/kernels"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// launchCommand is the invocation in engine/gpu/gen.go.
const launchCommand = "cudagen -launchers -pkg gpu -out launch_gen.go"

func smallSpec() []kernels.Kernel {
	return []kernels.Kernel{
		{
			Name: "rms_norm", File: "rmsnorm.cu", Doc: "out = x / rms(x) * w",
			Params: []kernels.Param{{Name: "out", Kind: kernels.Ptr}, {Name: "x", Kind: kernels.Ptr},
				{Name: "w", Kind: kernels.Ptr}, {Name: "n", Kind: kernels.I32}, {Name: "eps", Kind: kernels.F32}},
			Dims:  []string{"rows"},
			Block: [3]int{256, 1, 1},
			Grid:  [3]string{"rows", "1", ""},
		},
		{
			Name: "matvec_q8_0", File: "matvec.cu", Doc: "y = W x for Q8_0 rows",
			Params: []kernels.Param{{Name: "y", Kind: kernels.Ptr}, {Name: "w", Kind: kernels.Ptr}, {Name: "x", Kind: kernels.Ptr},
				{Name: "rows", Kind: kernels.U32}, {Name: "cols", Kind: kernels.U32}},
			Block:  [3]int{32, 8, 1},
			Grid:   [3]string{"(rows + 7) / 8", "1", "1"},
			Shared: "cols * 4",
		},
		{
			Name: "split_f16", File: "attention.cu", Doc: "one split over an f16 cache",
			Params: []kernels.Param{{Name: "out", Kind: kernels.Ptr}, {Name: "kc", Kind: kernels.Ptr},
				{Name: "n", Kind: kernels.I32}},
			Block: [3]int{128, 1, 1}, Grid: [3]string{"n", "1", "1"},
			Family: "split", Variant: map[string]int{"fp8": 0, "head_dim": 128},
		},
		{
			Name: "split_fp8", File: "attention.cu", Doc: "one split over an e4m3 cache with scales",
			Params: []kernels.Param{{Name: "out", Kind: kernels.Ptr}, {Name: "kc", Kind: kernels.Ptr},
				{Name: "ks", Kind: kernels.Ptr}, {Name: "n", Kind: kernels.I32}},
			Block: [3]int{128, 1, 1}, Grid: [3]string{"n", "1", "1"},
			Family: "split", Variant: map[string]int{"fp8": 1, "head_dim": 128},
		},
		{
			Name: "counters_advance", File: "counters.cu", Doc: "advances the device counters",
			Params: []kernels.Param{{Name: "ctr", Kind: kernels.Ptr}},
			Block:  [3]int{32, 1, 1},
			Grid:   [3]string{"1", "1", "1"},
		},
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden_.Check(t, name, got, *update)
}

func TestGoldenSmallSpec(t *testing.T) {
	src, err := Generate("cudagen -test", "gpu", smallSpec())
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "launch_small.golden", src)
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, parser.ParseComments)
	if err != nil {
		t.Fatalf("output does not parse: %v", err)
	}
	if !ast.IsGenerated(f) {
		t.Error("output lacks the Code generated header")
	}
	// The signatures the backend codes against.
	for _, want := range []string{
		"func (k_ *Kernels) RMSNorm(out cuda.DevPtr, x cuda.DevPtr, w cuda.DevPtr, n int32, eps float32, rows int) error",
		"func (k_ *Kernels) MatvecQ8_0(y cuda.DevPtr, w cuda.DevPtr, x cuda.DevPtr, rows uint32, cols uint32) error",
		"func loadKernels(e *cuda.Engine, mod cuda.Module) (*Kernels, error)",
		`const specHash = "`,
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

// The committed launchers must be what the current spec generates.
func TestCommittedLaunchersMatchSpec(t *testing.T) {
	path := filepath.Join("..", "..", "engine", "gpu", "launch_gen.go")
	committed, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	src, err := Generate(launchCommand, "gpu", kernels.Spec())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(committed, []byte(`const specHash = "`+SpecHash(kernels.Spec())+`"`)) {
		t.Errorf("%s: specHash is not the hash of kernels.Spec(): the spec changed; run go generate ./engine/gpu", path)
	}
	if !bytes.Equal(src, committed) {
		t.Fatalf("%s is stale: run go generate ./engine/gpu\n%s", path, golden_.FirstDiff(committed, src))
	}
	// The comparison above holds for what go generate runs only if it runs
	// launchCommand: the header records the command.
	gen, err := os.ReadFile(filepath.Join("..", "..", "engine", "gpu", "gen.go"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(gen), "gen/cmd/cudagen "+strings.TrimPrefix(launchCommand, "cudagen ")+"\n") {
		t.Fatalf("engine/gpu/gen.go does not run %q", launchCommand)
	}
}

func TestSpecHashSeesEveryField(t *testing.T) {
	base := SpecHash(smallSpec())
	for name, edit := range map[string]func([]kernels.Kernel){
		"name":    func(s []kernels.Kernel) { s[0].Name = "rms_norm2" },
		"kind":    func(s []kernels.Kernel) { s[0].Params[3].Kind = kernels.U32 },
		"param":   func(s []kernels.Kernel) { s[0].Params[3].Name = "m" },
		"dims":    func(s []kernels.Kernel) { s[0].Dims = nil },
		"block":   func(s []kernels.Kernel) { s[1].Block[1] = 4 },
		"grid":    func(s []kernels.Kernel) { s[1].Grid[0] = "rows" },
		"shared":  func(s []kernels.Kernel) { s[1].Shared = "" },
		"doc":     func(s []kernels.Kernel) { s[4].Doc = "x" },
		"family":  func(s []kernels.Kernel) { s[2].Family = "other" },
		"variant": func(s []kernels.Kernel) { s[3].Variant["head_dim"] = 64 },
	} {
		s := smallSpec()
		edit(s)
		if SpecHash(s) == base {
			t.Errorf("changing %s does not change the hash", name)
		}
	}
	if SpecHash(smallSpec()) != base {
		t.Error("hash is not deterministic")
	}
}

func TestGenerateRejects(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func([]kernels.Kernel) []kernels.Kernel
		want string
	}{
		{"unknown ident", func(s []kernels.Kernel) []kernels.Kernel { s[0].Grid[0] = "rows * eps"; return s }, "eps is not an integer parameter"},
		{"float literal", func(s []kernels.Kernel) []kernels.Kernel { s[0].Grid[0] = "rows / 2.5"; return s }, "not an integer"},
		{"call", func(s []kernels.Kernel) []kernels.Kernel { s[0].Shared = "len(rows)"; return s }, "min"},
		{"bad expr", func(s []kernels.Kernel) []kernels.Kernel { s[0].Grid[1] = "(rows"; return s }, "not a Go expression"},
		// Well-formed but would not compile in the launcher.
		{"division by zero", func(s []kernels.Kernel) []kernels.Kernel { s[0].Grid[0] = "(rows+7)/(8-8)"; return s }, "division by zero"},
		{"constant overflow", func(s []kernels.Kernel) []kernels.Kernel { s[1].Shared = "cols * (1 << 70)"; return s }, "overflows"},
		{"min of none", func(s []kernels.Kernel) []kernels.Kernel { s[0].Grid[0] = "min(rows, 1<<80)"; return s }, "does not compile"},
		{"block", func(s []kernels.Kernel) []kernels.Kernel { s[0].Block = [3]int{512, 4, 1}; return s }, "limit is 1024"},
		{"zero block", func(s []kernels.Kernel) []kernels.Kernel { s[0].Block[2] = 0; return s }, "block[2] = 0"},
		{"dup kernel", func(s []kernels.Kernel) []kernels.Kernel { return append(s, s[0]) }, "listed twice"},
		{"dup param", func(s []kernels.Kernel) []kernels.Kernel { s[0].Params[1].Name = "out"; return s }, "parameter out listed twice"},
		{"dim clash", func(s []kernels.Kernel) []kernels.Kernel { s[0].Dims = []string{"n"}; return s }, "dim n repeats"},
		{"keyword", func(s []kernels.Kernel) []kernels.Kernel { s[0].Params[3].Name = "range"; return s }, "not a Go identifier"},
		{"not an identifier", func(s []kernels.Kernel) []kernels.Kernel { s[0].Params[3].Name = "n-1"; return s },
			`kernel rms_norm: parameter "n-1" is not a Go identifier`},
		// ß has no upper case: the method would be unexported.
		{"unexported go name", func(s []kernels.Kernel) []kernels.Kernel { s[4].Name = "ß_advance"; return s },
			`kernel ß_advance: Go name "ßAdvance" is not an exported identifier`},
		{"predeclared", func(s []kernels.Kernel) []kernels.Kernel { s[0].Params[3].Name = "len"; return s }, "predeclared"},
		{"reserved", func(s []kernels.Kernel) []kernels.Kernel { s[0].Params[3].Name = "fmt"; return s }, "reserved"},
		// Names the generated code uses: the output would not compile.
		{"geometry helper", func(s []kernels.Kernel) []kernels.Kernel { s[4].Params[0].Name = "launchGeometry"; return s }, "reserved"},
		{"own geometry function", func(s []kernels.Kernel) []kernels.Kernel { s[4].Params[0].Name = "geomCountersAdvance"; return s }, "reserved"},
		{"family variant", func(s []kernels.Kernel) []kernels.Kernel {
			s[2].Params[1].Name, s[3].Params[1].Name = "v", "v"
			return s
		}, "reserved for the variant of family split"},
		{"family variant dim", func(s []kernels.Kernel) []kernels.Kernel {
			s[2].Dims, s[3].Dims = []string{"v"}, []string{"v"}
			return s
		}, "reserved for the variant"},
		{"family without keys", func(s []kernels.Kernel) []kernels.Kernel { s[2].Variant, s[3].Variant = nil, nil; return s },
			"kernel split_f16: family split without variant keys"},
		{"variant keys", func(s []kernels.Kernel) []kernels.Kernel { delete(s[3].Variant, "fp8"); return s }, "variant keys"},
		{"same variant", func(s []kernels.Kernel) []kernels.Kernel { s[3].Variant["fp8"] = 0; return s }, "same variant"},
		{"param kinds", func(s []kernels.Kernel) []kernels.Kernel { s[3].Params[1].Kind = kernels.I32; return s }, "two kinds"},
		{"family dims differ", func(s []kernels.Kernel) []kernels.Kernel { s[3].Dims = []string{"blocks"}; return s }, "dims [blocks], family split has []"},
		{"variant without family", func(s []kernels.Kernel) []kernels.Kernel { s[4].Variant = map[string]int{"x": 1}; return s }, "without a family"},
		{"go name clash", func(s []kernels.Kernel) []kernels.Kernel {
			s[4].Name = "rms__norm"
			return s
		}, "both become Go method RMSNorm"},
		{"kind", func(s []kernels.Kernel) []kernels.Kernel { s[0].Params[0].Kind = 9; return s }, "unknown kind 9"},
		{"empty", func(s []kernels.Kernel) []kernels.Kernel { return nil }, "empty kernel spec"},
		{"doc lines", func(s []kernels.Kernel) []kernels.Kernel { s[0].Doc = "one\ntwo */ three"; return s }, "doc \"one\\ntwo */ three\" is not one line"},
		{"file path", func(s []kernels.Kernel) []kernels.Kernel { s[0].File = "sub/rmsnorm.cu"; return s }, "not a .cu file name"},
		{"file newline", func(s []kernels.Kernel) []kernels.Kernel { s[0].File = "rms\nnorm.cu"; return s }, "not a .cu file name"},
		{"block x", func(s []kernels.Kernel) []kernels.Kernel { s[0].Block = [3]int{1025, 1, 1}; return s }, "kernel rms_norm: block[0] = 1025, want 1..1024"},
		{"block threads", func(s []kernels.Kernel) []kernels.Kernel { s[0].Block = [3]int{205, 5, 1}; return s }, "kernel rms_norm: block [205 5 1] has 1025 threads"},
		{"unary xor", func(s []kernels.Kernel) []kernels.Kernel { s[0].Grid[0] = "^rows"; return s }, `kernel rms_norm: grid[0] "^rows": operator ^ not allowed`},
		{"unary not", func(s []kernels.Kernel) []kernels.Kernel { s[1].Shared = "!cols"; return s }, `kernel matvec_q8_0: shared "!cols": operator ! not allowed`},
		// Go accepts ^ and one-argument max; the spec's form does not.
		{"call argument form", func(s []kernels.Kernel) []kernels.Kernel { s[0].Grid[0] = "min(rows, ^rows)"; return s },
			`kernel rms_norm: grid[0] "min(rows, ^rows)": operator ^ not allowed`},
		{"max of one", func(s []kernels.Kernel) []kernels.Kernel { s[0].Grid[0] = "max(rows)"; return s }, "only min(a, b, ...) and max(a, b, ...) calls"},
		{"selector call", func(s []kernels.Kernel) []kernels.Kernel { s[0].Grid[0] = "rows.min(rows, 1)"; return s }, "only min(a, b, ...) and max(a, b, ...) calls"},
		{"literal over int64", func(s []kernels.Kernel) []kernels.Kernel { s[1].Shared = "cols + 9223372036854775808"; return s },
			"literal 9223372036854775808: "},
		// CUDA's maxBlockDim.z is 64, not 1024.
		{"block z", func(s []kernels.Kernel) []kernels.Kernel { s[0].Block = [3]int{4, 1, 65}; return s }, "kernel rms_norm: block[2] = 65, want 1..64"},
		// Family and variant key names become Go identifiers in the output.
		{"family name", func(s []kernels.Kernel) []kernels.Kernel { s[2].Family, s[3].Family = "sp lit", "sp lit"; return s },
			`kernel split_f16: family "sp lit" does not make an exported Go name`},
		{"family digit", func(s []kernels.Kernel) []kernels.Kernel { s[2].Family, s[3].Family = "9x", "9x"; return s },
			`kernel split_f16: family "9x" does not make an exported Go name`},
		// A Go keyword is refused as a kernel name is; ß has no upper case.
		{"family keyword", func(s []kernels.Kernel) []kernels.Kernel { s[2].Family, s[3].Family = "func", "func"; return s },
			`kernel split_f16: family "func" does not make an exported Go name`},
		{"family unexported", func(s []kernels.Kernel) []kernels.Kernel { s[2].Family, s[3].Family = "ß", "ß"; return s },
			`kernel split_f16: family "ß" does not make an exported Go name ("ß")`},
		{"family go name clash", func(s []kernels.Kernel) []kernels.Kernel { s[3].Family = "split_"; return s },
			"kernel split_fp8: families split and split_ both become Go method Split"},
		{"variant key go name", func(s []kernels.Kernel) []kernels.Kernel {
			s[2].Variant, s[3].Variant = map[string]int{"_": 0}, map[string]int{"_": 1}
			return s
		}, `kernel split_f16: variant key "_" of family split does not make an exported Go name`},
		{"variant key unexported", func(s []kernels.Kernel) []kernels.Kernel {
			s[2].Variant, s[3].Variant = map[string]int{"ß": 0}, map[string]int{"ß": 1}
			return s
		}, `kernel split_f16: variant key "ß" of family split does not make an exported Go name ("ß")`},
		// Grid and Shared go into a line comment of the launcher too: a line
		// break made it a block comment that a "*/" in the expression ended.
		{"grid lines", func(s []kernels.Kernel) []kernels.Kernel { s[1].Grid[0] = "rows /* a */ + (cols +\n 1)"; return s },
			`kernel matvec_q8_0: grid[0] "rows /* a */ + (cols +\n 1)" is not one line`},
		{"shared lines", func(s []kernels.Kernel) []kernels.Kernel { s[1].Shared = "cols *\n 4"; return s },
			`kernel matvec_q8_0: shared "cols *\n 4" is not one line`},
		// The dispatcher's cases name the variant type: a parameter or dim of
		// that name would shadow it.
		{"variant type param", func(s []kernels.Kernel) []kernels.Kernel { s[3].Params[2].Name = "SplitVariant"; return s },
			`kernel split_fp8: parameter or dim "SplitVariant" is the name of family split's variant type`},
		{"variant type dim", func(s []kernels.Kernel) []kernels.Kernel {
			s[2].Dims, s[3].Dims = []string{"SplitVariant"}, []string{"SplitVariant"}
			return s
		}, `kernel split_f16: parameter or dim "SplitVariant" is the name of family split's variant type`},
		{"variant key field clash", func(s []kernels.Kernel) []kernels.Kernel {
			s[2].Variant, s[3].Variant = map[string]int{"a_b": 0, "a__b": 1}, map[string]int{"a_b": 1, "a__b": 1}
			return s
		}, `kernel split_f16: variant keys "a__b" and "a_b" of family split both become field AB`},
	} {
		_, err := Generate("x", "gpu", c.edit(smallSpec()))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.name, err, c.want)
		}
	}
}

func TestGoName(t *testing.T) {
	for c, want := range map[string]string{
		"rms_norm":                "RMSNorm",
		"rmsnorm_gated":           "RMSNormGated",
		"matvec_q8_0":             "MatvecQ8_0",
		"matvec_iq4_xs_wide":      "MatvecIQ4XSWide",
		"attn_split_f16_d64":      "AttnSplitF16D64",
		"attn_split_mma_fp8_d256": "AttnSplitMMAFP8D256",
		"kv_store_fp8":            "KVStoreFP8",
		"gdn_delta":               "GDNDelta",
		"argmax_partial":          "ArgMaxPartial",
		"topk_select":             "TopKSelect",
		"swiglu":                  "SwiGLU",
		"add":                     "Add",
		// An underscore stays only between two digits.
		"conv_k0_1":  "ConvK0_1",
		"split_d9_9": "SplitD9_9",
		"topk_8":     "TopK8",
	} {
		if got := GoName(c); got != want {
			t.Errorf("GoName(%s) = %s, want %s", c, got, want)
		}
	}
}

// TestGenerateAccepts: the limits themselves and the forms checkExpr allows.
func TestGenerateAccepts(t *testing.T) {
	for name, edit := range map[string]func([]kernels.Kernel){
		"block x 1024":       func(s []kernels.Kernel) { s[0].Block = [3]int{1024, 1, 1} },
		"block z 64":         func(s []kernels.Kernel) { s[0].Block = [3]int{16, 1, 64} },
		"1024 threads":       func(s []kernels.Kernel) { s[0].Block = [3]int{32, 32, 1} },
		"unary minus":        func(s []kernels.Kernel) { s[0].Grid[0] = "-(-rows)" },
		"unary plus":         func(s []kernels.Kernel) { s[0].Grid[1] = "+rows" },
		"largest int64":      func(s []kernels.Kernel) { s[1].Shared = "min(cols, 9223372036854775807)" },
		"every binary op":    func(s []kernels.Kernel) { s[1].Shared = "(cols+1-1)*4/2%8<<1>>1&255|1" },
		"max of three":       func(s []kernels.Kernel) { s[1].Grid[1] = "max(1, rows>>3, cols/8)" },
		"blank grid is one":  func(s []kernels.Kernel) { s[0].Grid = [3]string{"rows", " ", ""} },
		"blank shared is no": func(s []kernels.Kernel) { s[1].Shared = "  " },
	} {
		s := smallSpec()
		edit(s)
		if _, err := Generate("x", "gpu", s); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

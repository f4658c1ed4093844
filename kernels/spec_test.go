package kernels

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/memra-ai/memra/kernels/internal/kbuild"
)

// sourceKernels parses every .cu file in this directory except the unity file.
func sourceKernels(t *testing.T) (map[string]cuKernel, []string) {
	t.Helper()
	names, err := kbuild.SourceFiles(".")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]cuKernel{}
	var cus []string
	for _, n := range names {
		if !strings.HasSuffix(n, ".cu") || n == kbuild.Unity {
			continue
		}
		cus = append(cus, n)
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		ks, err := parseKernels(n, string(b))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			if prev, dup := got[k.Name]; dup {
				t.Errorf("kernel %s defined in %s and %s", k.Name, prev.File, k.File)
			}
			got[k.Name] = k
		}
	}
	if len(got) == 0 {
		t.Fatal("no extern \"C\" kernels found in kernels/*.cu")
	}
	return got, cus
}

// TestSpecConstantsMatchHeader: the Go constants that mirror common.cuh's
// #defines (the host sizes buffers and launches passes from them) have the
// header's values.
func TestSpecConstantsMatchHeader(t *testing.T) {
	hdr, err := os.ReadFile("common.cuh")
	if err != nil {
		t.Fatal(err)
	}
	defines := parseDefines(string(hdr))
	for name, v := range map[string]int{
		"MEMRA_TOPK_SLICE":         TopKSlice,
		"MEMRA_TOPK_MAX":           TopKMax,
		"MEMRA_TOPK_THREADS":       topkThreads,
		"MEMRA_DRAW_THREADS":       drawThreads,
		"MEMRA_PENALTY_THREADS":    penaltyThreads,
		"MEMRA_PENALTY_MAX_WINDOW": PenaltyMaxWindow,
		"MEMRA_Q8_LANE_PAIRS":      Q8LanePairs,
		"MEMRA_MVB_TOKENS":         MatvecBatchTokens,
		"MEMRA_MVB_SLOTS":          MatvecBatchSlots,
		"MEMRA_MVB_SLOT":           mvbSlot,
		"MEMRA_MVBK_SLOTS":         MatvecBatchTileSlots,
		"MEMRA_ATTN_THREADS":       attnThreads,
		"MEMRA_ARGMAX_CHUNK":       ArgmaxChunk,
		"MEMRA_SCREEN_TOP_CHUNK":   ScreenTopChunk,
		"MEMRA_GDN_ROWS":           gdnRows,
		"MEMRA_GDN_S":              GDNState,
		"MEMRA_NO_TOKEN":           NoToken,
	} {
		if d, ok := defines[name]; !ok || d != v {
			t.Errorf("%s: common.cuh has %d (found %v), the Go side %d", name, d, ok, v)
		}
	}
}

func TestSpecMatchesSources(t *testing.T) {
	src, _ := sourceKernels(t)
	hdr, err := os.ReadFile("common.cuh")
	if err != nil {
		t.Fatal(err)
	}
	defines := parseDefines(string(hdr))
	spec := map[string]Kernel{}
	for _, k := range Spec() {
		if _, dup := spec[k.Name]; dup {
			t.Errorf("spec lists %s twice", k.Name)
		}
		spec[k.Name] = k
	}
	for name, ck := range src {
		k, ok := spec[name]
		if !ok {
			t.Errorf("%s: kernel %s is not in Spec()", ck.File, name)
			continue
		}
		if k.File != ck.File {
			t.Errorf("%s: spec says file %s, defined in %s", name, k.File, ck.File)
		}
		if len(k.Params) != len(ck.Params) {
			t.Errorf("%s: spec has %d params, %s has %d", name, len(k.Params), ck.File, len(ck.Params))
		} else {
			for i := range k.Params {
				if k.Params[i] != ck.Params[i] {
					t.Errorf("%s: param %d: spec %v, source %v", name, i, k.Params[i], ck.Params[i])
				}
			}
		}
		if ck.LaunchBounds == "" {
			t.Errorf("%s: no __launch_bounds__ (the spec's Block must match the kernel's reduction tree)", name)
			continue
		}
		// __launch_bounds__(threads[, min blocks per SM]): the threads count.
		threads, _, _ := strings.Cut(ck.LaunchBounds, ",")
		lb, ok := defines[threads]
		if !ok {
			v, err := strconv.Atoi(threads)
			if err != nil {
				t.Errorf("%s: __launch_bounds__(%s) is neither a number nor a #define of common.cuh", name, ck.LaunchBounds)
				continue
			}
			lb = v
		}
		if n := k.Block[0] * k.Block[1] * k.Block[2]; n != lb {
			t.Errorf("%s: spec Block %v = %d threads, __launch_bounds__(%s) = %d", name, k.Block, n, ck.LaunchBounds, lb)
		}
	}
	for name, k := range spec {
		if _, ok := src[name]; !ok {
			t.Errorf("Spec() lists %s (file %s) but no .cu defines it", name, k.File)
		}
	}
}

func TestUnityIncludesEverySource(t *testing.T) {
	_, cus := sourceKernels(t)
	b, err := os.ReadFile(kbuild.Unity)
	if err != nil {
		t.Fatal(err)
	}
	inc := parseIncludes(string(b))
	for _, n := range cus {
		if !slices.Contains(inc, n) {
			t.Errorf("kernels/%s is not #included by %s, so it is not in the fatbin", n, kbuild.Unity)
		}
	}
	for _, n := range inc {
		if _, err := os.Stat(filepath.Join(".", n)); err != nil {
			t.Errorf("%s includes %s: %v", kbuild.Unity, n, err)
		}
	}
}

// evalExpr evaluates an integer Go expression over vars (+ - * / %,
// parentheses, min and max).
func evalExpr(e ast.Expr, vars map[string]int) (int, error) {
	switch x := e.(type) {
	case *ast.CallExpr:
		fn, ok := x.Fun.(*ast.Ident)
		if !ok || (fn.Name != "min" && fn.Name != "max") || len(x.Args) == 0 {
			return 0, fmt.Errorf("call %T: only min and max", x.Fun)
		}
		var out int
		for i, a := range x.Args {
			v, err := evalExpr(a, vars)
			if err != nil {
				return 0, err
			}
			if i == 0 || (fn.Name == "min" && v < out) || (fn.Name == "max" && v > out) {
				out = v
			}
		}
		return out, nil
	case *ast.BasicLit:
		if x.Kind != token.INT {
			return 0, fmt.Errorf("literal %s is not an integer", x.Value)
		}
		return strconv.Atoi(x.Value)
	case *ast.Ident:
		v, ok := vars[x.Name]
		if !ok {
			return 0, fmt.Errorf("%s is not an integer parameter or a Dim", x.Name)
		}
		return v, nil
	case *ast.ParenExpr:
		return evalExpr(x.X, vars)
	case *ast.BinaryExpr:
		a, err := evalExpr(x.X, vars)
		if err != nil {
			return 0, err
		}
		b, err := evalExpr(x.Y, vars)
		if err != nil {
			return 0, err
		}
		switch x.Op {
		case token.ADD:
			return a + b, nil
		case token.SUB:
			return a - b, nil
		case token.MUL:
			return a * b, nil
		case token.QUO, token.REM:
			if b == 0 {
				return 0, fmt.Errorf("division by zero")
			}
			if x.Op == token.QUO {
				return a / b, nil
			}
			return a % b, nil
		}
	}
	return 0, fmt.Errorf("unsupported expression %T", e)
}

// Every Grid and Shared expression must be an integer expression over the
// kernel's I32/U32 params and Dims that gives a positive size for realistic values.
func TestSpecGeometryExpressions(t *testing.T) {
	// Realistic values (qwen35 9B-like, t_kv 1000): every name a spec may use.
	sample := map[string]int{
		"n_embd": 4096, "n_vocab": 248320, "rows": 4096, "cols": 4096, "n": 12288, "heads": 16,
		"head_dim": 256, "n_rot": 64, "n_kv": 4, "n_head": 16, "capacity": 4096, "n_splits": 16,
		"t_kv": 1000, "channels": 8192, "kern": 4, "h_k": 16, "h_v": 32, "x_stride": 512,
		"out_stride": 256, "gate_stride": 512, "accumulate": 0, "token": 7, "pos": 999,
		"head_map": 0,
	}
	for _, k := range Spec() {
		if k.Doc == "" {
			t.Errorf("%s: empty Doc", k.Name)
		}
		if n := k.Block[0] * k.Block[1] * k.Block[2]; n <= 0 || n > 1024 || n%32 != 0 {
			t.Errorf("%s: Block %v is not 32..1024 threads in whole warps", k.Name, k.Block)
		}
		vars := map[string]int{}
		for _, p := range k.Params {
			if p.Kind == I32 || p.Kind == U32 {
				v, ok := sample[p.Name]
				if !ok {
					v = 3 // any positive value
				}
				vars[p.Name] = v
			}
		}
		for _, d := range k.Dims {
			vars[d] = 5
		}
		exprs := map[string]string{"grid.x": k.Grid[0], "grid.y": k.Grid[1], "grid.z": k.Grid[2]}
		if k.Shared != "" {
			exprs["shared"] = k.Shared
		}
		for what, s := range exprs {
			e, err := parser.ParseExpr(s)
			if err != nil {
				t.Errorf("%s: %s %q: %v", k.Name, what, s, err)
				continue
			}
			v, err := evalExpr(e, vars)
			if err != nil {
				t.Errorf("%s: %s %q: %v", k.Name, what, s, err)
				continue
			}
			if v <= 0 {
				t.Errorf("%s: %s %q = %d for sample values, want > 0", k.Name, what, s, v)
			}
		}
	}
}

// TestSpecGridsCoverTheirWork: the kernels that give a thread one element
// (i = blockIdx.x * blockDim.x + threadIdx.x) launch ceil(items/block)
// blocks, argmax_partial one block per ArgmaxChunk logits and gdn_delta
// gdnRows state rows a block: a grid that did not follow a change of the
// block size or the chunk would leave items unprocessed, with no error.
func TestSpecGridsCoverTheirWork(t *testing.T) {
	spec := map[string]Kernel{}
	for _, k := range Spec() {
		spec[k.Name] = k
	}
	cases := map[string]struct {
		count string // the parameter that counts the items
		rows  int    // items = rows * count (sigmoid_mul's rows of n)
		per   int    // items a block takes (0: one a thread)
	}{
		"swiglu":         {"n", 1, 0},
		"add":            {"n", 1, 0},
		"sigmoid_mul":    {"n", 3, 0},
		"gdn_conv":       {"channels", 1, 0},
		"argmax_partial": {"n", 1, ArgmaxChunk},
		"topk_select":    {"n", 1, TopKSlice},
	}
	for _, typ := range []string{"f32", "f16", "bf16", "q8_0", "q4_k", "q5_k", "q6_k", "q3_k", "iq4_xs", "q4_0", "iq4_nl"} {
		cases["embed_"+typ] = struct {
			count string
			rows  int
			per   int
		}{"n_embd", 1, 0}
	}
	for name, c := range cases {
		k, ok := spec[name]
		if !ok {
			t.Errorf("%s is not in Spec()", name)
			continue
		}
		per := c.per
		if per == 0 {
			per = k.Block[0] * k.Block[1] * k.Block[2]
		}
		e, err := parser.ParseExpr(k.Grid[0])
		if err != nil {
			t.Fatalf("%s: grid.x %q: %v", name, k.Grid[0], err)
		}
		for _, n := range []int{1, per - 1, per, per + 1, 248320} {
			vars := map[string]int{"rows": c.rows}
			for _, p := range k.Params {
				if _, ok := vars[p.Name]; !ok && (p.Kind == I32 || p.Kind == U32) {
					vars[p.Name] = 1
				}
			}
			vars[c.count] = n
			items := c.rows * n
			blocks, err := evalExpr(e, vars)
			if err != nil {
				t.Fatalf("%s: grid.x %q: %v", name, k.Grid[0], err)
			}
			if blocks*per < items || (blocks-1)*per >= items {
				t.Errorf("%s: grid.x %q = %d blocks of %d items for %d items, want %d", name, k.Grid[0], blocks, per, items, (items+per-1)/per)
			}
		}
	}
	// gdn_delta_normed's cluster (MEMRA_GDN_CLUSTER, gdn.cu) is a head's
	// blocks in y: its grid.y must be exactly that, and grid.x the heads.
	for _, name := range []string{"gdn_delta", "gdn_delta_normed"} {
		k := spec[name]
		e, err := parser.ParseExpr(k.Grid[1])
		if err != nil {
			t.Fatal(err)
		}
		if y, err := evalExpr(e, nil); err != nil || y*gdnRows != GDNState {
			t.Errorf("%s: grid.y %q = %d (%v) blocks of %d state rows, want %d rows", name, k.Grid[1], y, err, gdnRows, GDNState)
		}
		if k.Grid[0] != "h_v" {
			t.Errorf("%s: grid.x %q, want h_v (a block column a head)", name, k.Grid[0])
		}
	}
}

// The attention heads-per-block rule, worked by hand from attention.cu's
// memra_attn_geom (LPK = min(32, D/EPL), PD = D/LPK, G = min(4, 32/PD)).
func TestAttnHeadsPerBlock(t *testing.T) {
	cases := []struct {
		d   int
		vec bool
		g   int
	}{
		{64, false, 4},  // PD 2: 32/2 = 16, capped at 4
		{256, false, 4}, // PD 8
		{128, true, 4},  // 8 f16 or 8 e4m3 a load: LPK 16, PD 8
		{256, true, 4},  // LPK 32, PD 8
		{64, true, 4},   // LPK 8, PD 8
		{512, false, 2}, // PD 16: 32/16 (no kernel is built for 512)
		{512, true, 2},  // LPK 32, two loads a lane, PD 16
	}
	for _, c := range cases {
		if g := AttnHeadsPerBlock(c.d, c.vec); g != c.g {
			t.Errorf("AttnHeadsPerBlock(%d, vec=%v) = %d, want %d", c.d, c.vec, g, c.g)
		}
	}
	if _, err := AttnSplitName(96, false, true, false); err == nil {
		t.Error("AttnSplitName(96) succeeded; no kernel is built for head_dim 96")
	}
	if n, err := AttnSplitName(256, true, true, false); err != nil || n != "attn_split_vec_fp8_d256" {
		t.Errorf("AttnSplitName(256, fp8, vec) = %q, %v", n, err)
	}
	if n, err := AttnSplitName(256, true, true, true); err != nil || n != "attn_split_mma_fp8_d256" {
		t.Errorf("AttnSplitName(256, fp8, vec, mma) = %q, %v", n, err)
	}
	if n, err := AttnSplitName(256, false, true, true); err != nil || n != "attn_split_mma_f16_d256" {
		t.Errorf("AttnSplitName(256, f16, vec, mma) = %q, %v", n, err)
	}
	// The tensor-core split exists for head dim 256's vector layout only.
	for _, c := range []struct {
		d   int
		vec bool
	}{{128, true}, {64, true}, {256, false}} {
		if n, err := AttnSplitName(c.d, false, c.vec, true); err == nil {
			t.Errorf("AttnSplitName(%d, vec %v, mma) = %q, want an error", c.d, c.vec, n)
		}
	}
}

// The parser must reject what it cannot map and see through comments.
func TestParseKernels(t *testing.T) {
	src := `// extern "C" __global__ void commented(int a) {}
/* extern "C" __global__ void block_commented(int a) */
#define X 64
extern "C" __global__ void __launch_bounds__(X)
good(float* __restrict__ y, const unsigned short* w, int n, unsigned int m, float eps) { }
extern "C" __global__ void plain(const int* p) {}`
	ks, err := parseKernels("t.cu", src)
	if err != nil {
		t.Fatal(err)
	}
	if len(ks) != 2 || ks[0].Name != "good" || ks[1].Name != "plain" {
		t.Fatalf("parsed %+v, want good and plain", ks)
	}
	want := []Param{{"y", Ptr}, {"w", Ptr}, {"n", I32}, {"m", U32}, {"eps", F32}}
	if !slices.Equal(ks[0].Params, want) || ks[0].LaunchBounds != "X" {
		t.Errorf("good = %+v, want params %v and launch bounds X", ks[0], want)
	}
	if _, err := parseKernels("bad.cu", `extern "C" __global__ void bad(double d) {}`); err == nil {
		t.Error("a double parameter was accepted")
	}
	if got := parseIncludes("#include \"a.cu\"\n  #include <x.h>\n#include \"b.cuh\""); !slices.Equal(got, []string{"a.cu", "b.cuh"}) {
		t.Errorf("parseIncludes = %v", got)
	}
}

// TestKernelsWaitForTheirPredecessor: with programmatic dependent launch a
// kernel may start before the previous one finishes, so every kernel must
// call memra_grid_wait() before touching memory an earlier kernel wrote
// (common.cuh): it must be the first statement of the kernel's body. The
// matvec kernels' bodies are one call of memra_mv, which waits after its L2
// prefetch of weights, or of memra_mvt, which copies weights first (or of
// memra_mvt_mix, which makes a block one of two memra_mvt), and the batch
// kernels' one call of memra_mvb or memra_mvbt, whose rings copy weights
// first.
// gdn_conv, rmsnorm_gated, gdn_delta_normed and attn_prep (and their chunk
// forms) load before their wait what kernels at least two back wrote, and the attention
// splits prefetch their first keys (gdn.cu says why that is safe); they must
// still wait before their first plain (L1) load. A kernel without the wait would race its
// predecessor on sm_90.
func TestKernelsWaitForTheirPredecessor(t *testing.T) {
	kernels, cus := sourceKernels(t)
	name := regexp.MustCompile(`__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s*)?(?:MEMRA_\w+_CLUSTER\s+)?(\w+)\s*\(`)
	mv := regexp.MustCompile(`^memra_mv(?:t|b|bt|t_mix)?<[^;]*;$`)
	for _, n := range cus {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		for i := 0; ; {
			j := strings.Index(src[i:], `extern "C" __global__`)
			if j < 0 {
				break
			}
			start := i + j
			open := strings.Index(src[start:], "{")
			if open < 0 {
				t.Fatalf("%s: kernel at byte %d has no body", n, start)
			}
			body, end := braceBody(src, start+open)
			body = strings.TrimSpace(body)
			if m := name.FindStringSubmatch(src[start : start+open]); m != nil && earlyLoads[m[1]] {
				checkEarlyLoads(t, kernels[m[1]], body)
				i = end
				continue
			}
			if !strings.HasPrefix(body, "memra_grid_wait();") && !mv.MatchString(strings.Join(strings.Fields(body), " ")) {
				head := strings.Join(strings.Fields(src[start:start+open]), " ")
				t.Errorf("%s: %s does not start with memra_grid_wait()", n, head)
			}
			i = end
		}
	}
}

// TestSASSWaitBeforeTrigger reads the committed fatbin's sm_90 code (with
// cuobjdump, when this machine has it, as machines that build the kernels
// do): in every function the first griddepcontrol.wait (ACQBULK) must come
// before any griddepcontrol.launch_dependents (PREEXIT) and any EXIT, in code
// order, which is what the early loads' argument needs whatever the source
// says (helpers included).
func TestSASSWaitBeforeTrigger(t *testing.T) {
	tool, err := exec.LookPath("cuobjdump")
	if err != nil {
		t.Skip("no cuobjdump on this machine")
	}
	out, err := exec.Command(tool, "-sass", "-arch", "sm_90", "memra.fatbin").Output()
	if err != nil {
		t.Fatalf("cuobjdump: %v", err)
	}
	fn := regexp.MustCompile(`Function : (\w+)`)
	op := regexp.MustCompile(`^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z]+)`)
	var name string
	waited, checked := false, 0
	for _, line := range strings.Split(string(out), "\n") {
		if m := fn.FindStringSubmatch(line); m != nil {
			name, waited = m[1], false
			checked++
			continue
		}
		m := op.FindStringSubmatch(line)
		if m == nil || name == "" {
			continue
		}
		switch m[1] {
		case "ACQBULK":
			waited = true
		case "PREEXIT", "EXIT":
			if !waited {
				t.Errorf("%s: %s before the first ACQBULK (griddepcontrol.wait)", name, m[1])
				name = "" // one report per function
			}
		}
	}
	if checked < 40 {
		t.Errorf("read %d functions from the fatbin; expected every kernel", checked)
	}
}

// earlyLoads are the kernels that load before memra_grid_wait().
var earlyLoads = map[string]bool{"gdn_conv": true, "rmsnorm_gated": true, "gdn_delta_normed": true, "attn_prep_f16": true, "attn_prep_fp8": true,
	"rmsnorm_gated_chunk": true, "attn_prep_f16_chunk": true, "attn_prep_fp8_chunk": true}

func init() {
	// Every attention split kernel prefetches its first keys (attention.cu),
	// the chunk forms too; attn_prep_split (attn_prep and the vector split
	// in one launch) that and attn_prep's position, angles and norm weights.
	for _, dh := range []int{64, 128, 256} {
		for _, k := range []string{"f16", "vec_f16", "fp8", "vec_fp8"} {
			earlyLoads[fmt.Sprintf("attn_split_%s_d%d", k, dh)] = true
		}
		earlyLoads[fmt.Sprintf("attn_split_chunk_f16_d%d", dh)], earlyLoads[fmt.Sprintf("attn_split_chunk_fp8_d%d", dh)] = true, true
		earlyLoads[fmt.Sprintf("attn_prep_split_f16_d%d", dh)] = true
	}
	earlyLoads["attn_split_mma_f16_d256"], earlyLoads["attn_split_mma_fp8_d256"] = true, true
}

// TestKernelsTriggerAfterTheirWait: a kernel that reads before its wait
// what kernels two back wrote (earlyLoads) relies on every kernel calling
// memra_grid_launch_dependents() only after its own memra_grid_wait(): then
// when a kernel starts, the one before it has waited, so the one before that
// has completed. Checked in every kernel's body and in the matvec templates
// that hold the calls for theirs (memra_mvb_units triggers after the wait
// of its caller, memra_mvb; memra_mvb_stream and memra_mvb_ring hold both
// for memra_mvb; memra_mvt_loop holds both for memra_mvt and memra_mvbt).
func TestKernelsTriggerAfterTheirWait(t *testing.T) {
	names, err := kbuild.SourceFiles(".") // the .cuh too: mvring.cuh holds memra_mvt_loop
	if err != nil {
		t.Fatal(err)
	}
	fn := regexp.MustCompile(`(?:extern "C" __global__|__device__ __forceinline__ void (?:memra_mv|memra_mvt_loop|memra_mvb|memra_mvb_stream|memra_mvb_ring)\()`)
	checked, templates := 0, 0
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		for _, loc := range fn.FindAllStringIndex(src, -1) {
			open := strings.Index(src[loc[0]:], "{")
			if open < 0 {
				continue
			}
			body, _ := braceBody(src, loc[0]+open)
			head := strings.Join(strings.Fields(src[loc[0]:loc[0]+open]), " ")
			w, d := strings.Index(body, "memra_grid_wait();"), strings.Index(body, "memra_grid_launch_dependents();")
			if d >= 0 && (w < 0 || d < w) {
				t.Errorf("%s: %s triggers its dependents before its wait", n, head)
			}
			if !strings.HasPrefix(head, "extern") {
				templates++
			}
			checked++
		}
	}
	if templates != 5 {
		t.Errorf("checked %d matvec templates (memra_mv, memra_mvt_loop, memra_mvb, memra_mvb_stream, memra_mvb_ring); the pattern no longer finds them", templates)
	}
	if checked < 40 {
		t.Errorf("checked %d kernel bodies; the pattern no longer finds them", checked)
	}
}

// checkEarlyLoads: before its wait a kernel may read memory only through
// __ldcg (L2, never a stale L1 line) or __ldg (weights): the only arrays it
// may index there are the ones it declares there (registers), and it may
// not dereference a pointer parameter. A helper it calls there must be a
// pure one (earlyPure) or named memra_*_before_wait, whose body is held to
// the same rules and may neither wait nor trigger. (A source check; the SASS
// order of wait and trigger is TestSASSWaitBeforeTrigger's.)
func checkEarlyLoads(t *testing.T, k cuKernel, body string) {
	t.Helper()
	pre, _, ok := strings.Cut(body, "memra_grid_wait();")
	if !ok {
		t.Errorf("%s: %s loads early but never calls memra_grid_wait()", k.File, k.Name)
		return
	}
	var ptrs []string
	for _, p := range k.Params {
		if p.Kind == Ptr {
			ptrs = append(ptrs, p.Name)
		}
	}
	checkNoPlainLoads(t, k.File+": "+k.Name, pre, ptrs)
	for _, m := range earlyCall.FindAllStringSubmatch(pre, -1) {
		if earlyPure[m[1]] {
			continue
		}
		if !strings.HasSuffix(m[1], "_before_wait") {
			t.Errorf("%s: %s calls %s before its wait: only pure helpers and memra_*_before_wait ones may run there", k.File, k.Name, m[1])
			continue
		}
		body, params, ok := deviceFunc(t, m[1])
		if !ok {
			t.Errorf("%s: %s calls %s before its wait, which no source defines", k.File, k.Name, m[1])
			continue
		}
		where := k.File + ": " + k.Name + " → " + m[1]
		checkNoPlainLoads(t, where, body, params)
		if strings.Contains(body, "memra_grid_") {
			t.Errorf("%s: waits or triggers inside a helper that runs before the wait", where)
		}
		for _, c := range earlyCall.FindAllStringSubmatch(body, -1) {
			if !earlyPure[c[1]] {
				t.Errorf("%s: calls %s, not a pure helper", where, c[1])
			}
		}
	}
}

// earlyCall finds calls of memra_ helpers, template arguments or not.
var earlyCall = regexp.MustCompile(`\b(memra_\w+)\s*(?:<[^>;]*>)?\s*\(`)

// earlyPure are the helpers that read no memory (arithmetic, or an L2
// prefetch, which moves no data into registers), so may run before a wait.
var earlyPure = map[string]bool{"memra_silu": true, "memra_rope_cs": true, "memra_prefetch_l2": true}

// checkNoPlainLoads reports indexing of arrays not declared in code, and
// dereferences of the pointers ptrs.
func checkNoPlainLoads(t *testing.T, where, code string, ptrs []string) {
	t.Helper()
	local := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b(?:float4|float|int|unsigned)\s+(\w+)\s*\[`).FindAllStringSubmatch(code, -1) {
		local[m[1]] = true
	}
	for _, m := range regexp.MustCompile(`\b(\w+)\s*\[`).FindAllStringSubmatch(code, -1) {
		if !local[m[1]] {
			t.Errorf("%s: %s[...] before memra_grid_wait(): a plain load; use __ldcg or __ldg", where, m[1])
		}
	}
	for _, p := range ptrs {
		if regexp.MustCompile(`\*\s*` + p + `\b`).MatchString(code) {
			t.Errorf("%s: *%s before memra_grid_wait(): a plain load of a parameter", where, p)
		}
	}
}

// deviceFunc finds the __device__ function name in the kernel sources: its
// body and its pointer parameters' names.
func deviceFunc(t *testing.T, name string) (string, []string, bool) {
	t.Helper()
	_, cus := sourceKernels(t)
	def := regexp.MustCompile(`__device__[^;{]*\b` + name + `\s*\(([^)]*)\)\s*\{`)
	for _, n := range cus {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		loc := def.FindStringSubmatchIndex(src)
		if loc == nil {
			continue
		}
		body, _ := braceBody(src, loc[1]-1)
		var ptrs []string
		for _, arg := range strings.Split(src[loc[2]:loc[3]], ",") {
			if f := strings.Fields(strings.ReplaceAll(arg, "*", " * ")); len(f) >= 2 && slices.Contains(f, "*") {
				ptrs = append(ptrs, f[len(f)-1])
			}
		}
		return body, ptrs, true
	}
	return "", nil, false
}

// braceBody returns the text between the '{' at src[open] and its matching
// '}', and the index just past that '}'.
func braceBody(src string, open int) (string, int) {
	depth := 0
	for k := open; k < len(src); k++ {
		switch src[k] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return src[open+1 : k], k + 1
			}
		}
	}
	return src[open+1:], len(src)
}

// mvtCall finds a decode ring kernel's memra_mvt<KW, S, T[, REL]> call:
// KW, S and T's name (REL, when a block releases its successor, sizes
// nothing).
var mvtCall = regexp.MustCompile(`memra_mvt<(\d+), (\d+), (\w+)(?:, MEMRA_RELEASE_[A-Z]+)?>`)

// TestMatvecUnitsMatchTemplates: the host sizes matvec grids from
// MatvecKernels' RowsPerBlock, which must be (8 warps / KW) * R of the
// template arguments each kernel instantiates: memra_mv<KIND, R, KW, U>
// (matvec.cu; its LS argument must be LaneScales) or memra_mvt<KW, S, T>
// (mvring.cuh, R = one 16-row tile; mvtCall),
// and sizes their shared memory from Ring, which must be S, with tiles of
// tileBytes, which must be T's: kquant.cuh's MEMRA_Q4T_BYTES for memra_q4t,
// MEMRA_Q5T_BYTES for memra_q5t, MEMRA_Q6T_BYTES for memra_q6t,
// MEMRA_Q3T_BYTES for memra_q3t, MEMRA_IQ4T_BYTES for memra_iq4t,
// MEMRA_Q40T_BYTES for memra_q40t, MEMRA_IQ4NLT_BYTES for memra_iq4nlt.
func TestMatvecUnitsMatchTemplates(t *testing.T) {
	args := regexp.MustCompile(`memra_mv<\w+, (\d+), (\d+), (\d+)((?:, \w+)*)>`)
	kq, err := os.ReadFile("kquant.cuh")
	if err != nil {
		t.Fatal(err)
	}
	tileMacro := map[string]string{"memra_q4t": "MEMRA_Q4T_BYTES", "memra_q5t": "MEMRA_Q5T_BYTES", "memra_q6t": "MEMRA_Q6T_BYTES",
		"memra_q3t": "MEMRA_Q3T_BYTES", "memra_iq4t": "MEMRA_IQ4T_BYTES", "memra_q40t": "MEMRA_Q40T_BYTES", "memra_iq4nlt": "MEMRA_IQ4NLT_BYTES"}
	for _, mk := range MatvecKernels() {
		b, err := os.ReadFile(mk.File())
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		at := strings.Index(src, "\n"+mk.Name+"(")
		if at < 0 {
			t.Errorf("%s: not defined in %s", mk.Name, mk.File())
			continue
		}
		open := strings.Index(src[at:], "{")
		body, _ := braceBody(src, at+open)
		var r, kw int
		if mk.TensorCore {
			m := mvtCall.FindStringSubmatch(body)
			if m == nil {
				t.Errorf("%s: no memra_mvt<KW, S, T> call in its body", mk.Name)
				continue
			}
			r = 16
			kw, _ = strconv.Atoi(m[1])
			if ring, _ := strconv.Atoi(m[2]); ring != mk.Ring {
				t.Errorf("%s: template S=%d slots, MatvecKernels says Ring %d", mk.Name, ring, mk.Ring)
			}
			macro, ok := tileMacro[m[3]]
			if !ok {
				t.Errorf("%s: tile type %s has no known size macro", mk.Name, m[3])
			} else if want := fmt.Sprintf("#define %s %d\n", macro, mk.tileBytes()); !strings.Contains(string(kq), want) {
				t.Errorf("%s: tiles of %d bytes, but kquant.cuh does not say %q", mk.Name, mk.tileBytes(), strings.TrimSpace(want))
			}
			// The lean forms run the tiles matvec_q4k.cu and matvec_q6k.cu define.
			tileFile := map[string]string{"memra_q4t": "matvec_q4k.cu", "memra_q5t": "matvec_q4k.cu", "memra_q6t": "matvec_q6k.cu",
				"memra_q3t": "matvec_q6k.cu", "memra_iq4t": "matvec_q6k.cu", "memra_q40t": "matvec_q6k.cu", "memra_iq4nlt": "matvec_q6k.cu"}[m[3]]
			if tileFile != (MatvecKernel{GgmlType: mk.GgmlType, TensorCore: true}).File() {
				t.Errorf("%s: tile type %s is not its type's (%d)", mk.Name, m[3], mk.GgmlType)
			} else if b, _ := os.ReadFile(tileFile); !strings.Contains(string(b), "struct "+m[3]+" {") && !strings.Contains(string(b), "using "+m[3]+" = ") {
				t.Errorf("%s: tile type %s is not defined in %s", mk.Name, m[3], tileFile)
			}
			if lean := mk.Ring == 1; lean != mk.Lean || lean != (mk.File() == "matvec_lean.cu") {
				t.Errorf("%s: %d slots, Lean %v, in %s: one slot is the lean forms' (matvec_lean.cu) alone", mk.Name, mk.Ring, mk.Lean, mk.File())
			}
		} else {
			m := args.FindStringSubmatch(body)
			if m == nil {
				t.Errorf("%s: no memra_mv<KIND, R, KW, U> call in its body", mk.Name)
				continue
			}
			r, _ = strconv.Atoi(m[1])
			kw, _ = strconv.Atoi(m[2])
			// memra_mv's LS, its 8th argument: lane-ordered q8_0 scales,
			// which the engine writes for the kernels that say LaneScales.
			rest := strings.Split(strings.TrimPrefix(m[4], ", "), ", ")
			if ls := len(rest) >= 4 && rest[3] == "true"; ls != mk.LaneScales() {
				t.Errorf("%s: memra_mv's LS is %v, MatvecKernels' LaneScales %v", mk.Name, ls, mk.LaneScales())
			}
		}
		if got := (MatvecThreads / 32 / kw) * r; got != mk.RowsPerBlock {
			t.Errorf("%s: template R=%d KW=%d gives %d rows per unit, MatvecKernels says %d", mk.Name, r, kw, got, mk.RowsPerBlock)
		}
	}
}

// TestMatvecMixParts: each matvec_mix kernel's parts are a usual Q6_K
// kernel (A) and a usual Q4_K or Q5_K one (B), and its body runs them
// with their KW and tile types and MatvecMixRing slots, so that each
// part's sums are its kernel's (the engine's bit-for-bit GPU test compares
// them) and Shared counts the rings the kernel has.
func TestMatvecMixParts(t *testing.T) {
	b, err := os.ReadFile("matvec_mix.cu")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	call := regexp.MustCompile(`memra_mvt_mix<(\d+), (\d+), (\w+), (\d+), (\d+), (\w+)>`)
	tile := map[int]string{12: "memra_q4t", 13: "memra_q5t", 14: "memra_q6t"}
	seen := map[[4]int]bool{}
	for _, mk := range MatvecMixKernels() {
		a, bk := mk.Parts()
		if a.GgmlType != 14 || (bk.GgmlType != 12 && bk.GgmlType != 13) || a.Lean || bk.Lean || a.Wave || bk.Wave {
			t.Errorf("%s: parts %q and %q, want a usual Q6_K kernel and a usual Q4_K or Q5_K one", mk.Name, a.Name, bk.Name)
			continue
		}
		key := [4]int{a.GgmlType, a.WideKey(), bk.GgmlType, bk.WideKey()}
		if seen[key] {
			t.Errorf("%s: a second kernel for parts %s and %s", mk.Name, a.Name, bk.Name)
		}
		seen[key] = true
		at := strings.Index(src, "\n"+mk.Name+"(")
		if at < 0 {
			t.Errorf("%s: not defined in matvec_mix.cu", mk.Name)
			continue
		}
		body, _ := braceBody(src, at+strings.Index(src[at:], "{"))
		m := call.FindStringSubmatch(body)
		if m == nil {
			t.Errorf("%s: no memra_mvt_mix<KWA, SA, TA, KWB, SB, TB> call in its body", mk.Name)
			continue
		}
		for i, p := range []MatvecKernel{a, bk} {
			kw, _ := strconv.Atoi(m[1+3*i])
			ring, _ := strconv.Atoi(m[2+3*i])
			if got := (MatvecThreads / 32 / kw) * 16; got != p.RowsPerBlock || m[3+3*i] != tile[p.GgmlType] || ring != MatvecMixRing {
				t.Errorf("%s: part %d runs KW=%s S=%s %s, want %s's KW (%d rows a unit), %s and %d slots", mk.Name, i, m[1+3*i], m[2+3*i],
					m[3+3*i], p.Name, p.RowsPerBlock, tile[p.GgmlType], MatvecMixRing)
			}
		}
	}
	if len(seen) != 8 {
		t.Errorf("%d pairs of parts, want Q6_K plain or wide beside Q4_K or Q5_K plain or wide (8)", len(seen))
	}
}

// TestSASSHeadLoadsBeforeWait: a matvec kernel built with HL > 0 (memra_mv's
// 7th template argument) says its first HL 16-byte loads of each of its R
// rows leave before griddepcontrol.wait; in the committed fatbin's sm_90
// code (cuobjdump, when this machine has it) at least R·HL 16-byte loads
// must come before the first ACQBULK. ptxas 11.8 sank the .nc loads of
// those heads past it until step 70, silently (docs/perf.md step 70).
func TestSASSHeadLoadsBeforeWait(t *testing.T) {
	tool, err := exec.LookPath("cuobjdump")
	if err != nil {
		t.Skip("no cuobjdump on this machine")
	}
	args := regexp.MustCompile(`memra_mv<\w+, (\d+), (\d+), (\d+)((?:, \w+)*)>`)
	want := map[string]int{} // kernel → 16-byte loads its head issues
	src, err := os.ReadFile("matvec.cu")
	if err != nil {
		t.Fatal(err)
	}
	for _, mk := range MatvecKernels() {
		if mk.TensorCore {
			continue
		}
		at := strings.Index(string(src), "\n"+mk.Name+"(")
		if at < 0 {
			t.Fatalf("%s: not defined in matvec.cu", mk.Name)
		}
		open := strings.Index(string(src[at:]), "{")
		body, _ := braceBody(string(src), at+open)
		m := args.FindStringSubmatch(body)
		if m == nil {
			t.Fatalf("%s: no memra_mv call", mk.Name)
		}
		rest := strings.Split(strings.TrimPrefix(m[4], ", "), ", ")
		if len(rest) >= 3 {
			r, err1 := strconv.Atoi(m[1])
			hl, err2 := strconv.Atoi(rest[2])
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: memra_mv's R %q and HL %q must be integer literals for this check", mk.Name, m[1], rest[2])
			}
			if hl > 0 {
				want[mk.Name] = r * hl
			}
		}
	}
	if len(want) == 0 {
		t.Fatal("no matvec kernel with HL > 0: nothing to check")
	}
	for name, n := range want {
		early := sassBeforeWait(t, tool, name, "LDG.E.128")
		if early < n {
			t.Errorf("%s: %d 16-byte loads before the first ACQBULK, its head issues %d", name, early, n)
		} else {
			t.Logf("%s: %d 16-byte loads before the first ACQBULK (its head issues %d)", name, early, n)
		}
	}
}

// sassBeforeWait counts kernel name's sm_90 instructions containing op
// before its first griddepcontrol.wait (ACQBULK) in the committed fatbin,
// read with cuobjdump at tool.
func sassBeforeWait(t *testing.T, tool, name, op string) int {
	t.Helper()
	out, err := exec.Command(tool, "-sass", "-arch", "sm_90", "-fun", name, "memra.fatbin").Output()
	if err != nil {
		t.Fatalf("cuobjdump %s: %v", name, err)
	}
	n := 0
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "ACQBULK") {
			break
		}
		if strings.Contains(line, op) {
			n++
		}
	}
	return n
}

// TestSASSRingBeforeWait: the staged and laid batch kernels copy their first
// MatvecBatchSlots - 1 ring items (each a 16-byte load and a scale word of
// 4 rows: LDGSTS) before griddepcontrol.wait (ACQBULK), in the committed
// fatbin's sm_90 code, so that ptxas has not sunk them past it.
func TestSASSRingBeforeWait(t *testing.T) {
	tool, err := exec.LookPath("cuobjdump")
	if err != nil {
		t.Skip("no cuobjdump on this machine")
	}
	want := (MatvecBatchSlots - 1) * 4 * 2
	for _, bk := range MatvecBatchKernels() {
		if !bk.Staged && !bk.Laid {
			continue
		}
		if early := sassBeforeWait(t, tool, bk.Name, "LDGSTS"); early < want {
			t.Errorf("%s: %d cp.async copies before the first ACQBULK, its ring's first items are %d", bk.Name, early, want)
		}
	}
}

// TestSASSStreamBeforeWait: the 16-bit batch kernels (memra_mvb_stream)
// load their first item, a 16-byte load of each of a unit's 4 rows,
// before griddepcontrol.wait (ACQBULK) in the committed fatbin's sm_90
// code. The loads are weak and through a pointer the compiler cannot place
// (memra_opaque), so they are generic: LD.E.128, not LDG.
func TestSASSStreamBeforeWait(t *testing.T) {
	tool, err := exec.LookPath("cuobjdump")
	if err != nil {
		t.Skip("no cuobjdump on this machine")
	}
	checked := 0
	for _, bk := range MatvecBatchKernels() {
		if bk.GgmlType != 1 && bk.GgmlType != 30 { // f16, bf16
			continue
		}
		if early := sassBeforeWait(t, tool, bk.Name, ".E.128"); early < 4 {
			t.Errorf("%s: %d 16-byte loads before the first ACQBULK, its first item is 4", bk.Name, early)
		}
		checked++
	}
	if checked != 4 {
		t.Errorf("checked %d 16-bit batch kernels, want 4", checked)
	}
}

// TestMatvecBatchMatchesDecode: a matvec_batch kernel's sums are its decode
// kernels' bit for bit only with the same weight kind, the same K split
// (KW: which lane adds which loads, and how the warps' partials meet) and
// the same q8_0 scale order (LS); R and the load batching may differ; the
// K-quant kernels the same KW and tile type (their ring's slots may
// differ). Every decode kernel must have its batch kernel, which the
// engine's prefill looks up by the decode kernel's type and width.
func TestMatvecBatchMatchesDecode(t *testing.T) {
	mvArgs := regexp.MustCompile(`memra_mv<(\w+), \d+, (\d+), \d+((?:, \w+)*)>`)
	mvbArgs := regexp.MustCompile(`memra_mvb<(\w+), (\d+), (true|false), (true|false)(?:, (true|false)(?:, (\d+))?)?>`)
	body := func(file, name string) string {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		at := strings.Index(src, "\n"+name+"(")
		if at < 0 {
			t.Fatalf("%s: not defined in %s", name, file)
		}
		open := strings.Index(src[at:], "{")
		s, _ := braceBody(src, at+open)
		return s
	}
	decode := map[string]MatvecKernel{}
	for _, mk := range MatvecKernels() {
		decode[mk.Name] = mk
	}
	// memra_mvb_ring_geom's and memra_mvb_units' R, the rows a warp group
	// sums: the unit's size.
	src, err := os.ReadFile("matvec_batch.cu")
	if err != nil {
		t.Fatal(err)
	}
	rs := regexp.MustCompile(`constexpr int R = (\d+),`).FindAllSubmatch(src, -1)
	if rs == nil {
		t.Fatal("matvec_batch.cu: no constexpr int R = ...")
	}
	rows, _ := strconv.Atoi(string(rs[0][1]))
	for _, r := range rs[1:] {
		if n, _ := strconv.Atoi(string(r[1])); n != rows {
			t.Errorf("matvec_batch.cu: one R is %d, another %d; the units must agree", rows, n)
		}
	}
	covered := map[string]bool{}
	// The K-quant kernels: memra_mvbt<KW, slots, T>, the decode kernel's
	// memra_mvt<KW, slots, T[, REL]>: the same KW and tile type.
	mvbtArgs := regexp.MustCompile(`memra_mvbt<(\d+), MEMRA_MVBK_SLOTS, (\w+)>`)
	for _, bk := range MatvecBatchKernels() {
		if !bk.TensorCore {
			continue
		}
		m := mvbtArgs.FindStringSubmatch(body("matvec_batch_kq.cu", bk.Name))
		if m == nil {
			t.Errorf("%s: no memra_mvbt<KW, MEMRA_MVBK_SLOTS, T> call in its body", bk.Name)
			continue
		}
		for _, of := range bk.Of {
			mk, ok := decode[of]
			if !ok || !mk.TensorCore {
				t.Errorf("%s: Of names %s, not a tensor-core matvec kernel", bk.Name, of)
				continue
			}
			covered[of] = true
			d := mvtCall.FindStringSubmatch(body(mk.File(), of))
			if d == nil {
				t.Fatalf("%s: no memra_mvt<KW, S, T> call in its body", of)
			}
			if d[1] != m[1] || d[3] != m[2] {
				t.Errorf("%s: memra_mvbt<KW %s, %s>, but %s is memra_mvt<KW %s, %s>", bk.Name, m[1], m[2], of, d[1], d[3])
			}
			if mk.GgmlType != bk.GgmlType || mk.Wide != bk.Wide {
				t.Errorf("%s: type %d wide %v, but %s is type %d wide %v", bk.Name, bk.GgmlType, bk.Wide, of, mk.GgmlType, mk.Wide)
			}
		}
		if k, _ := strconv.Atoi(m[1]); k == 0 || (MatvecThreads/32/k)*16 != bk.RowsPerBlock {
			t.Errorf("%s: KW %s does not give RowsPerBlock %d (16-row tiles)", bk.Name, m[1], bk.RowsPerBlock)
		}
	}
	for _, bk := range MatvecBatchKernels() {
		if bk.TensorCore {
			continue
		}
		m := mvbArgs.FindStringSubmatch(body("matvec_batch.cu", bk.Name))
		if m == nil {
			t.Errorf("%s: no memra_mvb<KIND, KW, LS, STAGED[, LAID[, RS]]> call in its body", bk.Name)
			continue
		}
		kind, kw, ls := m[1], m[2], m[3] == "true"
		if staged := m[4] == "true"; staged != bk.Staged {
			t.Errorf("%s: memra_mvb's STAGED is %v, the spec's Staged %v", bk.Name, staged, bk.Staged)
		}
		if laid := m[5] == "true"; laid != bk.Laid {
			t.Errorf("%s: memra_mvb's LAID is %v, the spec's Laid %v", bk.Name, laid, bk.Laid)
		}
		if (bk.Staged || bk.Laid) && bk.GgmlType != 8 {
			t.Errorf("%s: staged or laid, but the rings carry q8_0's loads and scales only (memra_mvb_ring_geom)", bk.Name)
		}
		for _, of := range bk.Of {
			mk, ok := decode[of]
			if !ok || mk.TensorCore {
				t.Errorf("%s: Of names %s, not a CUDA-core matvec kernel", bk.Name, of)
				continue
			}
			covered[of] = true
			d := mvArgs.FindStringSubmatch(body("matvec.cu", of))
			if d == nil {
				t.Fatalf("%s: no memra_mv<KIND, R, KW, U...> call in its body", of)
			}
			rest := strings.Split(strings.TrimPrefix(d[3], ", "), ", ")
			dls := len(rest) >= 4 && rest[3] == "true"
			if d[1] != kind || d[2] != kw || dls != ls {
				t.Errorf("%s: memra_mvb<%s, KW %s, LS %v>, but %s is memra_mv<%s, KW %s, LS %v>", bk.Name, kind, kw, ls, of, d[1], d[2], dls)
			}
			if mk.GgmlType != bk.GgmlType || mk.Wide != bk.Wide {
				t.Errorf("%s: type %d wide %v, but %s is type %d wide %v", bk.Name, bk.GgmlType, bk.Wide, of, mk.GgmlType, mk.Wide)
			}
		}
		r := rows // RS: the 16-bit stream's rows a warp where the call gives them
		if m[6] != "" {
			r, _ = strconv.Atoi(m[6])
		}
		if k, _ := strconv.Atoi(kw); k == 0 || (MatvecThreads/32/k)*r != bk.RowsPerBlock {
			t.Errorf("%s: KW %s with R %d does not give RowsPerBlock %d", bk.Name, kw, r, bk.RowsPerBlock)
		}
	}
	for n := range decode {
		if !covered[n] {
			t.Errorf("%s has no matvec_batch kernel", n)
		}
	}
}

package convert

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/memra-ai/memra/gguf"
)

// mixWant is what llama-quantize (a5bb8ba's llama_tensor_get_type) gives a
// preset's matrices in one mix, worked out by hand from its rules for the
// preset's layer count, not through mixType: the base type, the LM head's,
// and per role the blocks that get a raised type.
type mixWant struct {
	base, head gguf.Type
	raised     map[string]map[int]gguf.Type // role ("ffn_down", ...) → block → type; the rest of the role takes other[role]
	other      map[string]gguf.Type         // a role's type outside raised; absent: base
}

func layers(t gguf.Type, ls ...int) map[int]gguf.Type {
	m := map[int]gguf.Type{}
	for _, l := range ls {
		m[l] = t
	}
	return m
}

// TestMixTypesPresets checks the mixes' types, tensor by tensor, on the 9B
// (32 blocks, attention in every fourth, untied) and 0.8B (24 blocks,
// tied) presets, against the rules worked out by hand for those block
// counts (TestMixTypesMatchLlama holds them to llama.cpp's own output).
//
// use_more_bits(i, n) is i < n/8 || i >= 7n/8 || (i − n/8) % 3 == 2. For n
// = 32: 0–3, 28–31 and 6, 9, ..., 27. For n = 24: 0–2, 21–23 and 5, 8,
// ..., 20. attn_v and attn_qkv count together, one a block, so i is the
// block either way.
func TestMixTypesPresets(t *testing.T) {
	Q3, Q4, Q5, Q6 := gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K
	more32 := []int{0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31}
	more24 := []int{0, 1, 2, 5, 8, 11, 14, 17, 20, 21, 22, 23}
	for _, c := range []struct {
		preset string
		ft     FileType
		want   mixWant
	}{
		{"9b", FileQ4_K_M, mixWant{Q4, Q6,
			map[string]map[int]gguf.Type{"ffn_down": layers(Q6, more32...), "attn_v": layers(Q6, more32...), "attn_qkv": layers(Q6, more32...)}, nil}},
		{"9b", FileQ5_K_M, mixWant{Q5, Q6,
			map[string]map[int]gguf.Type{"ffn_down": layers(Q6, more32...), "attn_v": layers(Q6, more32...), "attn_qkv": layers(Q6, more32...)}, nil}},
		// Q3_K_M: attn_v and attn_qkv Q5_K in blocks 0 and 1, else Q4_K;
		// ffn_down Q5_K below n/16 = 2, else Q4_K.
		{"9b", FileQ3_K_M, mixWant{Q3, Q6,
			map[string]map[int]gguf.Type{"ffn_down": layers(Q5, 0, 1), "attn_qkv": layers(Q5, 0, 1)},
			map[string]gguf.Type{"ffn_down": Q4, "attn_v": Q4, "attn_output": Q4, "attn_qkv": Q4}}},
		{"9b", FileQ3_K_L, mixWant{Q3, Q6, nil,
			map[string]gguf.Type{"ffn_down": Q5, "attn_v": Q5, "attn_output": Q5, "attn_qkv": Q5}}},
		{"0.8b", FileQ4_K_M, mixWant{Q4, Q6,
			map[string]map[int]gguf.Type{"ffn_down": layers(Q6, more24...), "attn_v": layers(Q6, more24...), "attn_qkv": layers(Q6, more24...)}, nil}},
	} {
		t.Run(c.preset+"-"+c.ft.String(), func(t *testing.T) {
			spec, plan := mustPresetPlan(t, c.preset)
			count := map[gguf.Type]int{}
			for i := range plan {
				e := &plan[i]
				got := TensorType(spec, e, c.ft)
				count[got]++
				want := c.want.base
				role := strings.TrimSuffix(strings.TrimPrefix(e.Name, fmt.Sprintf("blk.%d.", e.Layer)), ".weight")
				switch {
				case len(e.Shape) < 2 || strings.HasSuffix(e.Name, "_norm.weight") || strings.HasSuffix(e.Name, "ssm_conv1d.weight") || !strings.HasSuffix(e.Name, ".weight"):
					want = gguf.TypeF32
				case e.Name == "output.weight" || (spec.Tied && e.Name == "token_embd.weight"):
					want = c.want.head
				default:
					if typ, ok := c.want.raised[role][e.Layer]; ok {
						want = typ
					} else if typ, ok := c.want.other[role]; ok {
						want = typ
					}
				}
				if got != want {
					t.Errorf("%s: %v, want %v", e.Name, got, want)
				}
			}
			t.Logf("types: %v", count)
		})
	}
}

// TestMixTypesMatchLlama holds TensorType to llama.cpp's quantizer:
// testdata/llama-mixtypes/PRESET-MIX.txt lists the type it gave every
// tensor it quantised of the preset's bf16 synth file in that mix
// (scripts/llama/mixtypes.sh: node-llama-cpp 3.22.1's llama.cpp, September
// 2026). Every matrix must get that type, and every tensor left out there
// (kept F32) F32.
func TestMixTypesMatchLlama(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "llama-mixtypes", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no llama.cpp type tables (%v)", err)
	}
	for _, path := range files {
		preset, mix, _ := strings.Cut(strings.TrimSuffix(filepath.Base(path), ".txt"), "-")
		t.Run(preset+"-"+mix, func(t *testing.T) {
			ft, err := ParseFileType(mix)
			if err != nil {
				t.Fatal(err)
			}
			spec, plan := mustPresetPlan(t, preset)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			llama := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				name, typ, ok := strings.Cut(line, " ")
				if !ok {
					t.Fatalf("%s: line %q is not \"tensor type\"", path, line)
				}
				llama[name] = typ
			}
			seen := 0
			for i := range plan {
				e := &plan[i]
				want, ok := llama[e.Name]
				if !ok {
					want = "F32"
				} else {
					seen++
				}
				if got := TensorType(spec, e, ft).String(); got != want {
					t.Errorf("%s: %s, llama.cpp %s", e.Name, got, want)
				}
			}
			if seen != len(llama) {
				t.Errorf("%d of llama.cpp's %d tensors are in the plan", seen, len(llama))
			}
		})
	}
}

// TestMoreBits pins moreBits to use_more_bits's values for n = 40 and 48
// (the sets llama.cpp's rule gives: 20 of 40 and 24 of 48).
func TestMoreBits(t *testing.T) {
	for _, c := range []struct {
		n    int
		want []int
	}{
		{40, []int{0, 1, 2, 3, 4, 7, 10, 13, 16, 19, 22, 25, 28, 31, 34, 35, 36, 37, 38, 39}},
		{48, []int{0, 1, 2, 3, 4, 5, 8, 11, 14, 17, 20, 23, 26, 29, 32, 35, 38, 41, 42, 43, 44, 45, 46, 47}},
	} {
		var got []int
		for i := range c.n {
			if moreBits(i, c.n) {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("n = %d: %v, want %v", c.n, got, c.want)
		}
	}
}

// TestConvertMix converts kDims's checkpoint (block 0 Gated DeltaNet,
// block 1 attention, rows of 256 and 512 but attn_output's 128) with each
// mix and checks the file: its file_type, each matrix's type (n = 2
// blocks: use_more_bits(i, 2) holds for i = 1 only, so Q4_K_M's ffn_down
// and attn_v are Q6_K in block 1 and its attn_qkv, block 0, keeps Q4_K;
// Q3_K_M's attn_qkv and attn_v, blocks 0 and 1, are Q5_K and its ffn_down
// Q4_K, n/16 being 0), and each tensor's bytes against gguf.Quantize of
// the F32 conversion in that type.
func TestConvertMix(t *testing.T) {
	d := kDims()
	dir := t.TempDir()
	writeCheckpoint(t, dir, d, hfTensors(d, 11, DTypeF32))
	ref, _ := convertDir(t, dir, Options{Type: FileF32})
	Q3, Q4, Q5, Q6, Q8 := gguf.TypeQ3_K, gguf.TypeQ4_K, gguf.TypeQ5_K, gguf.TypeQ6_K, gguf.TypeQ8_0
	for _, c := range []struct {
		ft   FileType
		base gguf.Type
		want map[string]gguf.Type // the rest: base (rows of 256) or Q8_0 (attn_output's 128)
	}{
		{FileQ4_K_M, Q4, map[string]gguf.Type{"output.weight": Q6, "blk.1.ffn_down.weight": Q6, "blk.1.attn_v.weight": Q6}},
		{FileQ5_K_M, Q5, map[string]gguf.Type{"output.weight": Q6, "blk.1.ffn_down.weight": Q6, "blk.1.attn_v.weight": Q6}},
		{FileQ3_K_M, Q3, map[string]gguf.Type{"output.weight": Q6, "blk.0.ffn_down.weight": Q4, "blk.1.ffn_down.weight": Q4,
			"blk.1.attn_v.weight": Q5, "blk.0.attn_qkv.weight": Q5}},
		{FileQ3_K_L, Q3, map[string]gguf.Type{"output.weight": Q6, "blk.0.ffn_down.weight": Q5, "blk.1.ffn_down.weight": Q5,
			"blk.1.attn_v.weight": Q5, "blk.0.attn_qkv.weight": Q5}},
	} {
		t.Run(c.ft.String(), func(t *testing.T) {
			f, _ := convertDir(t, dir, Options{Type: c.ft})
			if ft, err := f.Uint32("general.file_type"); err != nil || FileType(ft) != c.ft {
				t.Errorf("general.file_type = %d, %v; want %d", ft, err, c.ft)
			}
			seen := map[gguf.Type]int{}
			for _, ti := range f.Tensors {
				want, ok := c.want[ti.Name]
				switch {
				case ok:
				case len(ti.Shape) < 2 || strings.HasSuffix(ti.Name, "norm.weight") || strings.HasSuffix(ti.Name, "ssm_conv1d.weight") || !strings.HasSuffix(ti.Name, ".weight"):
					want = gguf.TypeF32
				case ti.Shape[0]%256 == 0:
					want = c.base
				default:
					want = Q8 // attn_output: rows of 128, whatever its rule
				}
				if ti.Type != want {
					t.Errorf("%s %v: type %v, want %v", ti.Name, ti.Shape, ti.Type, want)
					continue
				}
				seen[want]++
				sameAsQuantized(t, ref, f, ti.Name, want)
			}
			t.Logf("tensors by type: %v", seen)
		})
	}
}

// mustPresetPlan is PresetPlan, failing t on an error.
func mustPresetPlan(t *testing.T, name string) (*Spec, []Entry) {
	t.Helper()
	spec, plan, err := PresetPlan(name)
	if err != nil {
		t.Fatal(err)
	}
	return spec, plan
}

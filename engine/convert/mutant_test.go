package convert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/memra-ai/memra/gguf"
)

// TestConvertF16TransformRounds: llama.cpp applies the +1 of Qwen3.5's norms
// and the −exp of A_log to an F16 checkpoint's tensors in half precision, so
// the F32 values it writes are halves. The expected values are worked out by
// hand: halves near 1 are 2⁻¹⁰ apart and near 2.7 are 2⁻⁹ apart.
func TestConvertF16TransformRounds(t *testing.T) {
	d := qwen35Dims()
	dir := t.TempDir()
	ts := hfTensors(d, 11, DTypeF16)
	set := func(name string, vals ...float32) {
		x := ts[name]
		for i := range x.data {
			x.data[i] = vals[i%len(vals)]
		}
	}
	// 1 + 1e-4 is nearer 1 than 1 + 2⁻¹⁰; 1 + 7e-4 is nearer 1 + 2⁻¹⁰;
	// 1 + 0.5 is a half.
	set("model.norm.weight", 1e-4, 7e-4, 0.5, -0.25)
	// −e = −2.71828… lies between the halves −2.716796875 and −2.71875,
	// nearer the second; −exp(0) = −1 is a half. H_v = 4 heads, reordered
	// [0 2 1 3] (see TestConvertTransforms).
	set("model.layers.0.linear_attn.A_log", 0, 1, 0, 1)
	writeCheckpoint(t, dir, d, ts)
	f, _ := convertDir(t, dir, Options{Type: FileF32})

	norm := readF32Tensor(t, f, "output_norm.weight")
	wantNorm := []float32{1, 1 + 1.0/1024, 1.5, 0.75}
	for i, got := range norm {
		if want := wantNorm[i%4]; got != want {
			t.Fatalf("output_norm.weight[%d] = %.9g, want %.9g (1+w rounded to half)", i, got, want)
		}
	}
	a := readF32Tensor(t, f, "blk.0.ssm_a")
	wantA := []float32{-1, -1, -2.71875, -2.71875}
	if len(a) != len(wantA) {
		t.Fatalf("ssm_a has %d values, want %d", len(a), len(wantA))
	}
	for i := range a {
		if a[i] != wantA[i] {
			t.Fatalf("ssm_a = %.9g, want %.9g (−exp rounded to half)", a, wantA)
		}
	}
}

// TestSpecBounds: each limit Validate and specFromHF put on config.json,
// at the value just inside it (accepted) and just past it (refused, the
// message naming config.json and the key). The base is the tiny qwen35
// checkpoint's config: hidden 32, heads 2/1, head_dim 8, H_k 2 × d_k 4,
// H_v 4 × d_v 4, partial_rotary_factor 0.25.
func TestSpecBounds(t *testing.T) {
	const maxDim = 1 << 24 // model.MaxDim, which the messages quote
	rope := func(k string, v any) func(map[string]any) {
		return func(c map[string]any) { c["rope_parameters"].(map[string]any)[k] = v }
	}
	set := func(kv ...any) func(map[string]any) {
		return func(c map[string]any) {
			for i := 0; i < len(kv); i += 2 {
				c[kv[i].(string)] = kv[i+1]
			}
		}
	}
	for _, c := range []struct {
		name string
		mod  func(map[string]any)
		want string // "" for accepted
	}{
		{"4096 layers", set("num_hidden_layers", 4096, "layer_types", nil), ""},
		{"4097 layers", set("num_hidden_layers", 4097, "layer_types", nil), "num_hidden_layers = 4097 is out of range [1, 4096]"},
		{"no layers", set("num_hidden_layers", 0, "layer_types", nil), "num_hidden_layers = 0 is out of range [1, 4096]"},
		{"context of MaxDim", set("max_position_embeddings", maxDim), ""},
		{"zero width", set("hidden_size", 0), "hidden_size = 0 is out of range [1, 16777216]"},
		{"heads not a multiple of kv heads", set("num_attention_heads", 3, "num_key_value_heads", 2), "num_attention_heads 3 is not a multiple of num_key_value_heads 2"},
		{"one MTP layer", set("mtp_num_hidden_layers", 1), ""},
		{"two MTP layers", set("mtp_num_hidden_layers", 2), "mtp_num_hidden_layers = 2: only 0 or 1 is supported"},
		{"negative MTP layers", set("mtp_num_hidden_layers", -1), "mtp_num_hidden_layers = -1: only 0 or 1 is supported"},
		{"zero epsilon", set("rms_norm_eps", 0), "rms_norm_eps 0 and rope_theta 1e+07 must be positive and finite"},
		{"zero theta", rope("rope_theta", 0), "rms_norm_eps 1e-06 and rope_theta 0 must be positive and finite"},
		{"theta past float32", rope("rope_theta", 1e39), "must be positive and finite as float32"},
		{"conv kernel 2", set("linear_conv_kernel_dim", 2), ""},
		{"zero key head dim", set("linear_key_head_dim", 0), "linear_key_head_dim = 0 is out of range [1, 16777216]"},
		// H_v × d_v is ssm.inner_size, bounded as every dimension is.
		{"inner size MaxDim", set("linear_num_value_heads", 2, "linear_value_head_dim", maxDim/2), ""},
		{"inner size past MaxDim", set("linear_num_value_heads", 2, "linear_value_head_dim", maxDim/2+1), "= 2 × 8388609 = 16777218 (ssm.inner_size) is more than 16777216"},
		{"value heads not a multiple of key heads", set("linear_num_value_heads", 3), "linear_num_value_heads 3 is not a multiple of linear_num_key_heads 2"},
		{"rotary dims = head_dim", rope("partial_rotary_factor", 1.0), ""},
		{"rotary dims past head_dim", rope("partial_rotary_factor", 2.0), "rotary dims 16 out of range for head_dim 8"},
		{"no rotary dims", rope("partial_rotary_factor", 0.0), "rotary dims 0 out of range for head_dim 8"},
		// Keys that must be there, and the rope variants not supported.
		{"no hidden_size", set("hidden_size", nil), `missing "hidden_size"`},
		{"no rms_norm_eps", set("rms_norm_eps", nil), `missing "rms_norm_eps"`},
		{"no rope_theta", rope("rope_theta", nil), "missing rope_theta (top level or in rope_parameters)"},
		{"top-level rope_theta", func(c map[string]any) { delete(c, "rope_parameters"); c["rope_theta"] = 1e6 }, ""},
		{"rope_type yarn", rope("rope_type", "yarn"), `rope_type "yarn" is not supported (only "default")`},
		{"legacy type linear", func(c map[string]any) { c["rope_parameters"] = map[string]any{"type": "linear", "rope_theta": 1e6} }, `rope_type "linear" is not supported`},
		{"no rope_type", func(c map[string]any) { c["rope_parameters"] = map[string]any{"rope_theta": 1e6} }, ""},
		{"rope_scaling", func(c map[string]any) {
			delete(c, "rope_parameters")
			c["rope_theta"] = 1e6
			c["rope_scaling"] = map[string]any{"type": "yarn", "factor": 4}
		}, "rope_scaling is not supported"},
		{"null rope_scaling", func(c map[string]any) {
			delete(c, "rope_parameters")
			c["rope_theta"] = 1e6
			c["rope_scaling"] = json.RawMessage("null")
		}, ""},
		{"no heads, no head_dim", set("num_attention_heads", 0, "head_dim", nil), "num_attention_heads = 0 is out of range"},
		{"no linear_num_key_heads", set("linear_num_key_heads", nil), `missing "linear_num_key_heads"`},
		{"zero mrope section", rope("mrope_section", []int{0, 12, 4}), ""},
		{"negative mrope section", rope("mrope_section", []int{11, -1}), "mrope_section[1] = -1 out of range"},
		{"mrope section of MaxInt32", rope("mrope_section", []int{1<<31 - 1}), ""},
		{"mrope section past int32", rope("mrope_section", []int{1 << 31}), "mrope_section[0] = 2147483648 out of range"},
		{"four mrope sections", rope("mrope_section", []int{1, 1, 1, 1}), ""},
		{"five mrope sections", rope("mrope_section", []int{1, 1, 1, 1, 1}), "mrope_section has 5 entries, at most 4 allowed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeCheckpoint(t, dir, qwen35Dims(), nil)
			path := filepath.Join(dir, "config.json")
			cfg := map[string]any{}
			readJSONInto(t, path, &cfg)
			c.mod(cfg)
			rp, _ := cfg["rope_parameters"].(map[string]any)
			for _, m := range []map[string]any{cfg, rp} {
				for k, v := range m {
					if v == nil {
						delete(m, k)
					}
				}
			}
			writeJSON(t, path, cfg)
			hc, err := readHFConfig(dir)
			if err != nil {
				t.Fatal(err)
			}
			_, err = specFromHF(hc, path)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), path+": ")):
				t.Fatalf("err %v, want one starting %s: and containing %q", err, path, c.want)
			}
		})
	}
}

// TestPlanRefusesBadSpec: Plan (synth's way in, with no config.json) checks
// the Spec it is given as Convert's config path does.
func TestPlanRefusesBadSpec(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(*Spec)
		want string
	}{
		{"unknown architecture", func(s *Spec) { s.Arch = "llama" }, `unknown architecture "llama"`},
		// Convert's qwen35 path checks the count before sizing the
		// schedule; qwen3's and synth's rely on Validate.
		{"5000 layers", func(s *Spec) { s.NLayer = 5000 }, "num_hidden_layers = 5000 is out of range [1, 4096]"},
		{"short schedule", func(s *Spec) { s.Recurrent = s.Recurrent[:1] }, "layer schedule has 1 entries for 4 layers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := PresetSpec("tiny")
			if err != nil {
				t.Fatal(err)
			}
			c.mod(s)
			if _, err := Plan(s); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestSpecHeadDimDefault: a config without head_dim has heads of
// hidden_size / num_attention_heads (32 / 2 here), as transformers gives.
func TestSpecHeadDimDefault(t *testing.T) {
	dir := t.TempDir()
	writeCheckpoint(t, dir, qwen35Dims(), nil)
	path := filepath.Join(dir, "config.json")
	cfg := map[string]any{}
	readJSONInto(t, path, &cfg)
	delete(cfg, "head_dim")
	writeJSON(t, path, cfg)
	hc, err := readHFConfig(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := specFromHF(hc, path)
	if err != nil {
		t.Fatal(err)
	}
	if s.HeadDim != 16 || s.RopeDims != 4 {
		t.Fatalf("head_dim %d, rotary dims %d; want 16 and 4 (a quarter)", s.HeadDim, s.RopeDims)
	}
	// An empty mrope_section is no sections: llama.cpp's default ones,
	// written where it writes the default.
	cfg["rope_parameters"].(map[string]any)["mrope_section"] = []int{}
	writeJSON(t, path, cfg)
	if hc, err = readHFConfig(dir); err != nil {
		t.Fatal(err)
	}
	if s, err = specFromHF(hc, path); err != nil {
		t.Fatal(err)
	}
	if s.RopeSections != [4]int32{11, 11, 10, 0} || s.RopeSectionsFromConfig {
		t.Fatalf("empty mrope_section: sections %v (from config %v), want the default [11 11 10 0]", s.RopeSections, s.RopeSectionsFromConfig)
	}
}

// TestSpecSchedule: without layer_types, every full_attention_interval-th
// layer is attention, the interval 4 when the config has none (llama.cpp's
// default), and an interval below 1 is refused; with layer_types, the
// interval is the first attention layer's place, one past the last layer
// when there is none, and a list of the wrong length is refused.
func TestSpecSchedule(t *testing.T) {
	const L, F = "linear_attention", "full_attention"
	for _, c := range []struct {
		interval any      // nil: absent
		types    []string // nil: absent
		want     string
	}{
		{nil, nil, "[true true true false] 4"},
		{2, nil, "[true false true false] 2"},
		{1, nil, "[false false false false] 1"},
		{0, nil, "error: full_attention_interval = 0"},
		{nil, []string{L, L, L, F}, "[true true true false] 4"},
		{nil, []string{L, L, L, L}, "[true true true true] 5"},
		{nil, []string{F, F, F, F}, "[false false false false] 1"},
		{nil, []string{L, "sliding_attention", L, F}, `error: layer_types[1] = "sliding_attention" (want linear_attention or full_attention)`},
		{nil, []string{L, F, L}, "error: layer_types has 3 entries for num_hidden_layers 4"},
		{2, []string{L, L, L, F}, "error: full_attention_interval 2 disagrees with layer_types (interval 4)"},
	} {
		dir := t.TempDir()
		writeCheckpoint(t, dir, qwen35Dims(), nil)
		path := filepath.Join(dir, "config.json")
		cfg := map[string]any{}
		readJSONInto(t, path, &cfg)
		delete(cfg, "layer_types")
		if c.types != nil {
			cfg["layer_types"] = c.types
		}
		if c.interval != nil {
			cfg["full_attention_interval"] = c.interval
		}
		writeJSON(t, path, cfg)
		hc, err := readHFConfig(dir)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if s, err := specFromHF(hc, path); err != nil {
			got = "error: " + strings.TrimPrefix(err.Error(), path+": ")
		} else {
			got = fmt.Sprint(s.Recurrent, " ", s.FullAttnInterval)
		}
		if got != c.want {
			t.Errorf("full_attention_interval %v, layer_types %v: got %s, want %s", c.interval, c.types, got, c.want)
		}
	}
}

// TestConvertConfigUnreadable: a checkpoint directory whose config.json is
// missing, is not JSON, or has a text_config that is no object is refused,
// naming the file.
func TestConvertConfigUnreadable(t *testing.T) {
	for _, c := range []struct {
		name, config string // config "" for none
		want         string
	}{
		{"missing", "", "config.json"},
		{"not JSON", `{"architectures":`, "config.json: "},
		{"text_config not an object", `{"architectures":["Qwen3_5ForConditionalGeneration"],"text_config":"x"}`, "config.json: text_config: a JSON string where an object belongs"},
		{"top level not an object", `["Qwen3ForCausalLM"]`, "config.json: a JSON array where an object belongs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.config != "" {
				if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(c.config), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := Convert(dir, io.Discard, Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestOpenCheckpointFileFaults: a shard the index names but the directory
// lacks, and a file cut inside its header (a few bytes short, so that the
// header's length still reads), are refused naming the file.
func TestOpenCheckpointFileFaults(t *testing.T) {
	ts := map[string]stTensor{"a": {shape: []int64{2}, data: []float32{1, 2}}}
	t.Run("missing shard", func(t *testing.T) {
		dir := t.TempDir()
		writeSafetensors(t, filepath.Join(dir, "model-00001-of-00002.safetensors"), ts)
		writeJSON(t, filepath.Join(dir, "model.safetensors.index.json"), map[string]any{"weight_map": map[string]string{
			"a": "model-00001-of-00002.safetensors", "b": "model-00002-of-00002.safetensors"}})
		_, err := OpenCheckpoint(dir)
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "model-00002-of-00002.safetensors")) {
			t.Fatalf("err %v, want one naming the missing shard", err)
		}
	})
	t.Run("cut in the header", func(t *testing.T) {
		dir := t.TempDir()
		b := safetensorsBytes(t, ts)
		hlen := len(b) - 8 - 8 // the data is two F32 values
		p := filepath.Join(dir, "model.safetensors")
		if err := os.WriteFile(p, b[:8+hlen-4], 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := OpenCheckpoint(dir)
		want := fmt.Sprintf("safetensors %s: header length %d runs past the end of the %d-byte file (truncated?)", p, hlen, 8+hlen-4)
		if err == nil || err.Error() != want {
			t.Fatalf("err %v, want %q", err, want)
		}
	})
}

// TestSafetensorsHeaderEntries: the limits on one header entry, each at
// the value just inside (accepted) and past it (refused, naming the file
// and the tensor).
func TestSafetensorsHeaderEntries(t *testing.T) {
	for _, c := range []struct {
		name, entry string
		data        int
		want        string // "" for accepted
	}{
		{"8 dims", `{"dtype":"F32","shape":[1,1,1,1,1,1,1,2],"data_offsets":[0,8]}`, 8, ""},
		{"9 dims", `{"dtype":"F32","shape":[1,1,1,1,1,1,1,1,2],"data_offsets":[0,8]}`, 8, `tensor "t" has 9 dims (limit 8)`},
		{"negative dim", `{"dtype":"F32","shape":[-1,-2],"data_offsets":[0,8]}`, 8, `tensor "t" has invalid shape [-1 -2]`},
		// A start before the data section would read the header as values.
		{"negative start", `{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}`, 8, `tensor "t": data_offsets [-8,0] do not hold 8 bytes for F32[2]`},
		{"offsets past the bytes", `{"dtype":"F32","shape":[2],"data_offsets":[0,12]}`, 12, `tensor "t": data_offsets [0,12] do not hold 8 bytes for F32[2]`},
		{"three offsets", `{"dtype":"F32","shape":[2],"data_offsets":[0,8,8]}`, 8, `tensor "t": data_offsets must have 2 entries, has 3`},
		{"no offsets", `{"dtype":"F32","shape":[2]}`, 8, `tensor "t": data_offsets must have 2 entries, has 0`},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := rawSafetensors(`{"t":`+c.entry+`}`, make([]byte, c.data))
			st, err := parseSafetensorsHeader(bytes.NewReader(b), int64(len(b)), "x.safetensors")
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want == "" && (len(st.tensors) != 1 || st.tensors[0].Size != int64(c.data)):
				t.Fatalf("tensors %+v, want one of %d bytes", st.tensors, c.data)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), "safetensors x.safetensors: "+c.want)):
				t.Fatalf("err %v, want one containing %q", err, c.want)
			}
		})
	}
}

// TestSafetensorsOverlapAfterSmallTensor: the overlap check remembers the
// furthest end so far; a small tensor right after a large one moves it, and
// the next tensor's overlap with the small one is found.
func TestSafetensorsOverlapAfterSmallTensor(t *testing.T) {
	hdr := `{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[1],"data_offsets":[16,20]},` +
		`"c":{"dtype":"F32","shape":[1],"data_offsets":[18,22]}}`
	b := rawSafetensors(hdr, make([]byte, 24))
	_, err := parseSafetensorsHeader(bytes.NewReader(b), int64(len(b)), "x.safetensors")
	want := `tensors "b" and "c" share bytes (data_offsets [16,20] and [18,22])`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err %v, want one containing %q", err, want)
	}
}

// TestOpenCheckpointDirFaults: how OpenCheckpoint finds a checkpoint's
// files, and its refusals, each naming the file or directory at fault.
func TestOpenCheckpointDirFaults(t *testing.T) {
	const s1, s2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
	a := map[string]stTensor{"a": {shape: []int64{1}, data: []float32{1}}}
	b := map[string]stTensor{"b": {shape: []int64{1}, data: []float32{2}}}
	for _, c := range []struct {
		name  string
		files map[string]map[string]stTensor // safetensors files
		index any                            // nil: none; "dir": a directory in its place
		want  string                         // "" for accepted
	}{
		// Only model*.safetensors are shards; a model card is passed over.
		{"other files", map[string]map[string]stTensor{"model.safetensors": a, "optimizer.safetensors": b}, nil, ""},
		{"no shards", map[string]map[string]stTensor{"optimizer.safetensors": b}, nil, "no model*.safetensors files and no model.safetensors.index.json"},
		{"one tensor in two shards", map[string]map[string]stTensor{s1: a, s2: a}, nil, `tensor "a" is in both`},
		{"shard in a subdirectory", map[string]map[string]stTensor{s1: a}, map[string]any{"weight_map": map[string]string{"a": "sub/" + s1}},
			`shard name "sub/` + s1 + `" must be a plain file name`},
		{"hidden shard", map[string]map[string]stTensor{s1: a}, map[string]any{"weight_map": map[string]string{"a": ".x.safetensors"}},
			`shard name ".x.safetensors" must be a plain file name`},
		{"index and shard disagree", map[string]map[string]stTensor{s1: b}, map[string]any{"weight_map": map[string]string{"a": s1}},
			"weight map and shards disagree: missing a (in " + s1 + "); not in the index b"},
		{"index unreadable", map[string]map[string]stTensor{"model.safetensors": a}, "dir", "model.safetensors.index.json"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for n, ts := range c.files {
				writeSafetensors(t, filepath.Join(dir, n), ts)
			}
			if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# model card"), 0o644); err != nil {
				t.Fatal(err)
			}
			switch c.index {
			case nil:
			case "dir":
				if err := os.Mkdir(filepath.Join(dir, "model.safetensors.index.json"), 0o755); err != nil {
					t.Fatal(err)
				}
			default:
				writeJSON(t, filepath.Join(dir, "model.safetensors.index.json"), c.index)
			}
			ck, err := OpenCheckpoint(dir)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want == "":
				defer ck.Close()
				if len(ck.Tensors) != 1 || ck.Tensors[0].Name != "a" {
					t.Fatalf("tensors %v, want model.safetensors's a only", ck.Tensors)
				}
			case err == nil || !strings.Contains(err.Error(), c.want):
				t.Fatalf("err %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := OpenCheckpoint(filepath.Join(t.TempDir(), "absent")); err == nil || !strings.Contains(err.Error(), "absent") {
		t.Fatalf("missing directory: err %v, want one naming it", err)
	}
}

// TestShortList: error messages list at most 8 names, then how many more.
func TestShortList(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	for _, c := range []struct {
		n    int
		want string
	}{
		{0, "none"},
		{8, "a, b, c, d, e, f, g, h"},
		{9, "a, b, c, d, e, f, g, h and 1 more"},
		{10, "a, b, c, d, e, f, g, h and 2 more"},
	} {
		if got := short(names[:c.n]); got != c.want {
			t.Errorf("%d names: %q, want %q", c.n, got, c.want)
		}
	}
}

// TestTensorTypeOneDim: 1-D weights stay F32 whatever their name; the MTP
// head's enorm and hnorm end in "norm.weight" but not "_norm.weight".
func TestTensorTypeOneDim(t *testing.T) {
	spec, _ := PresetSpec("tiny")
	for _, name := range []string{"blk.4.nextn.enorm.weight", "blk.4.nextn.hnorm.weight"} {
		for _, n := range fileTypeNames {
			if got := TensorType(spec, &Entry{Name: name, Shape: []uint64{256}}, n.ft); got != gguf.TypeF32 {
				t.Errorf("%s as %v: %v, want F32", name, n.ft, got)
			}
		}
	}
}

// TestSynthErrors: an unknown preset or an unreadable vocabulary GGUF ends
// Synth with an error naming it, and SynthFile leaves no file behind.
func TestSynthErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.gguf")
	var buf bytes.Buffer
	err := SynthFile(t.Context(), out, SynthOptions{Preset: "7b"})
	if err == nil || !strings.Contains(err.Error(), `"7b"`) || !strings.Contains(err.Error(), "0.8b") {
		t.Errorf("unknown preset: %v; want an error naming it and the presets", err)
	}
	missing := filepath.Join(dir, "no-vocab.gguf")
	if err := Synth(&buf, SynthOptions{Preset: "tiny", VocabGGUF: missing}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing vocab GGUF: %v; want an error naming %s", err, missing)
	}
	if buf.Len() != 0 {
		t.Errorf("%d bytes written before the vocabulary was read", buf.Len())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("files left in the output directory: %v", ents)
	}
}

// TestSynthWorkers: Workers 0 means one generating goroutine per CPU
// (GOMAXPROCS), and a positive Workers is the count used; counted while
// the first tensor is written, when every worker still has chunks to do.
func TestSynthWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, c := range []struct{ workers, want int }{{0, 4}, {1, 1}, {3, 3}} {
		before := runtime.NumGoroutine()
		extra := -1
		err := Synth(io.Discard, SynthOptions{Preset: "tiny", Type: FileBF16, Seed: 1, Workers: c.workers,
			Progress: func(done, total int64) {
				if extra < 0 {
					extra = runtime.NumGoroutine() - before
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		if extra != c.want {
			t.Errorf("Workers %d: %d goroutines generating; want %d", c.workers, extra, c.want)
		}
		waitGoroutines(t, before)
	}
}

// TestSynthTensorRowCounts: a tensor of one row fewer or more than a
// whole number of chunks (1024 rows of 1024 values each) is written whole:
// 2 bytes a value in bf16, all of them reported to progress.
func TestSynthTensorRowCounts(t *testing.T) {
	for _, rows := range []int{1, 1023, 1024, 1025, 2047, 2048} {
		e := &Entry{Name: "blk.0.ffn_up.weight", Shape: []uint64{1024, uint64(rows)}, Role: "matrix"}
		var w countWriter
		var progressed int64
		if err := synthTensor(&w, e, gguf.TypeBF16, 1, 2, func(n int64) { progressed += n }); err != nil {
			t.Fatal(err)
		}
		if want := int64(2 * 1024 * rows); w.n != want || progressed != want {
			t.Errorf("%d rows: %d bytes written, %d reported; want %d", rows, w.n, progressed, want)
		}
	}
}

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// TestWriteFileAtomicCancelledLargeWrite: once ctx is cancelled, a write of
// more than a buffer (4 MiB) at once, which bypasses the buffer, fails with
// ctx's cause instead of spinning, and nothing is left behind.
func TestWriteFileAtomicCancelledLargeWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.gguf")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var werr error
	done := make(chan error, 1)
	go func() {
		done <- WriteFileAtomic(ctx, path, func(w io.Writer) error {
			_, werr = w.Write(make([]byte, 5<<20))
			return werr
		})
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), path) {
			t.Errorf("cancelled write: %v; want context.Canceled naming %s", err, path)
		}
		if werr == nil {
			t.Error("a 5 MiB write after cancellation succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a 5 MiB write after cancellation did not return in 10 s")
	}
	if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 0 {
		t.Errorf("files left behind: %v", ents)
	}
}

// TestSynthVocabMissingKeys: a vocabulary GGUF that lacks the token list
// or the token types is refused with an error naming the file and the key.
func TestSynthVocabMissingKeys(t *testing.T) {
	dir := t.TempDir()
	for name, kvs := range map[string][]gguf.KV{
		"tokenizer.ggml.tokens": {{Key: "general.architecture", Value: gguf.StringValue("qwen35")}},
		"tokenizer.ggml.token_type": {
			{Key: "general.architecture", Value: gguf.StringValue("qwen35")},
			{Key: "tokenizer.ggml.tokens", Value: gguf.StringsValue([]string{"a", "b"})},
		},
	} {
		path := filepath.Join(dir, name+".gguf")
		var buf bytes.Buffer
		gw := gguf.NewWriter(&buf, 3)
		for _, kv := range kvs {
			gw.SetKV(kv.Key, kv.Value)
		}
		if err := gw.Write(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err := Synth(&out, SynthOptions{Preset: "tiny", VocabGGUF: path})
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), name) {
			t.Errorf("vocab GGUF without %s: %v; want an error naming the file and the key", name, err)
		}
		if out.Len() != 0 {
			t.Errorf("vocab GGUF without %s: %d bytes written", name, out.Len())
		}
	}
}

// TestConvertWriteFails: a write that fails part way (a full disk) ends
// Convert with that error, no write is tried after it, and Progress never
// counts bytes past the failure. The output (a 2 MiB token_embd) is larger
// than the GGUF writer's 1 MiB buffer, so the failure comes mid-tensor.
func TestConvertWriteFails(t *testing.T) {
	d := qwen3Dims()
	d.vocab, d.embd, d.tied = 8192, 64, true
	dir := t.TempDir()
	writeCheckpoint(t, dir, d, hfTensors(d, 3, DTypeF32))
	errFull := errors.New("disk full")
	for _, n := range []int64{1 << 10, 64 << 10} {
		w := &failPast{n: n, err: errFull}
		var late int64
		err := Convert(dir, w, Options{Type: FileF32, Progress: func(done, total int64) {
			if w.failed > 0 {
				late = done
			}
		}})
		if !errors.Is(err, errFull) || w.failed != 1 {
			t.Errorf("failing past %d bytes: %v after %d failed writes; want %v after one", n, err, w.failed, errFull)
		}
		if late != 0 {
			t.Errorf("failing past %d bytes: progress reported %d bytes done after the write failed", n, late)
		}
	}
}

// failPast fails every write that would take its output past n bytes.
type failPast struct {
	n, written int64
	err        error
	failed     int
}

func (w *failPast) Write(p []byte) (int, error) {
	if w.written+int64(len(p)) > w.n {
		w.failed++
		return 0, w.err
	}
	w.written += int64(len(p))
	return len(p), nil
}

// TestConvertCheckpointTruncated: a shard cut short while it is converted
// (overwritten by a new download) ends the conversion with an error naming
// the shard, and ConvertFile leaves no output or temporary file. The cut
// comes after several tensors, so that the next read is of each kind (rows
// in order, rows reordered by head).
func TestConvertCheckpointTruncated(t *testing.T) {
	d := qwen35Dims()
	ts := hfTensors(d, 3, DTypeF32)
	// convert cuts the shard at the k-th progress call (never for k 0) and
	// returns ConvertFile's error and how many progress calls there were.
	convert := func(k int) (int, error) {
		dir, outDir := t.TempDir(), t.TempDir()
		writeCheckpoint(t, dir, d, ts)
		shard := filepath.Join(dir, "model.safetensors")
		n := 0
		err := ConvertFile(t.Context(), dir, filepath.Join(outDir, "out.gguf"), Options{Type: FileF32,
			Progress: func(done, total int64) {
				if n++; n == k {
					if err := os.Truncate(shard, 0); err != nil {
						t.Fatal(err)
					}
				}
			}})
		if k > 0 {
			if err == nil || !strings.Contains(err.Error(), shard) {
				t.Errorf("shard truncated after %d tensors: %v; want an error naming %s", k, err, shard)
			}
			if ents, _ := os.ReadDir(outDir); len(ents) != 0 {
				t.Errorf("shard truncated after %d tensors: files left behind: %v", k, ents)
			}
		}
		return n, err
	}
	steps, err := convert(0)
	if err != nil || steps < 2 {
		t.Fatalf("uncut conversion: %v, %d progress calls; the test needs a tensor after the cut", err, steps)
	}
	for _, k := range []int{1, 2, 3, steps / 2, steps - 1} {
		convert(k)
	}
}

// TestSynthVocabDoesNotFit: a vocabulary GGUF with more tokens than the
// preset's vocabulary (tiny: 512), or with token types not one per token,
// is refused with an error naming the file, before any byte is written;
// one of exactly 512 tokens is taken.
func TestSynthVocabDoesNotFit(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name        string
		toks, types int
		ok          bool
	}{{"big", 513, 513, false}, {"types", 10, 9, false}, {"exact", 512, 512, true}} {
		toks := make([]string, c.toks)
		for i := range toks {
			toks[i] = fmt.Sprint("t", i)
		}
		types := make([]int32, c.types)
		var buf bytes.Buffer
		gw := gguf.NewWriter(&buf, 3)
		gw.SetKV("tokenizer.ggml.tokens", gguf.StringsValue(toks))
		gw.SetKV("tokenizer.ggml.token_type", gguf.Int32sValue(types))
		if err := gw.Write(); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, c.name+".gguf")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		err := Synth(&out, SynthOptions{Preset: "tiny", VocabGGUF: path})
		switch {
		case c.ok && err != nil:
			t.Errorf("%d tokens for a 512-token model: %v", c.toks, err)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), path) || out.Len() != 0):
			t.Errorf("%d tokens, %d types for a 512-token model: %v, %d bytes written; want an error naming %s", c.toks, c.types, err, out.Len(), path)
		}
	}
}

// TestSynthFileReplacesOutput: an existing GGUF file of the user's at the
// output path (here only its magic and a version) is replaced by the new
// model, and no temporary file is left. Files that are not GGUF are
// TestConvertReplacesOnlyGGUF's.
func TestSynthFileReplacesOutput(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.gguf")
	if err := os.WriteFile(path, []byte("GGUF\x03\x00\x00\x00old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SynthFile(t.Context(), path, SynthOptions{Preset: "tiny", Type: FileBF16, Seed: 1}); err != nil {
		t.Fatalf("replacing %s: %v", path, err)
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(b, []byte("GGUF")) {
		t.Errorf("%s after SynthFile: %q…, %v; want a GGUF", path, b[:min(len(b), 8)], err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("files in the output directory: %v; want only %s", ents, path)
	}
}

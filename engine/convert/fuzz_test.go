package convert

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/memra-ai/memra/engine/model"
	"github.com/memra-ai/memra/engine/tokenizer"
	"github.com/memra-ai/memra/gguf"
)

// rawSafetensors is a safetensors file of the header text hdr (not padded)
// followed by data.
func rawSafetensors(hdr string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(hdr)))
	return append(append(b, hdr...), data...)
}

// FuzzSafetensors checks the safetensors header parser on arbitrary files:
// it returns tensors or an error, and every tensor it returns has a
// supported dtype, at most maxTensorDims dims, a byte size equal to its
// element count times the dtype's size, lies inside the data section (after
// the 8-byte length and the header) and shares no byte with another
// tensor; names are unique, sorted, and are the header's keys other than
// __metadata__.
//
// Seeds: files as the Python library writes them (writeSafetensors) and
// hand-made edge cases (overlaps, empty tensors, lengths past the end).
func FuzzSafetensors(f *testing.F) {
	d := qwen3Dims()
	d.embd, d.vocab, d.ff, d.layers = 4, 16, 4, 1
	for i, dt := range []DType{DTypeF32, DTypeBF16, DTypeF16} {
		ts := hfTensors(d, uint64(i), dt)
		for n := range ts {
			if strings.Contains(n, "mlp") || strings.Contains(n, "self_attn") {
				delete(ts, n) // a small seed mutates faster
			}
		}
		f.Add(safetensorsBytes(f, ts))
	}
	for _, c := range []struct {
		hdr  string
		data []byte
	}{
		{`{}`, nil},
		{`{"__metadata__":{"format":"pt"}}`, nil},
		{`{"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]}}`, make([]byte, 4)},
		{`{"a":{"dtype":"F16","shape":[0,3],"data_offsets":[2,2]},"b":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}`, make([]byte, 2)},
		{`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, make([]byte, 8)},
		{`{"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}}`, make([]byte, 4)},
		{`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, make([]byte, 3)},
		{`{"a":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}}`, make([]byte, 8)},
		{`{"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}}`, nil},
		{`null`, nil},
		{`[]`, nil},
	} {
		f.Add(rawSafetensors(c.hdr, c.data))
	}
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, '{', '}'})
	f.Add([]byte{2, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := parseSafetensorsHeader(bytes.NewReader(b), int64(len(b)), "x.safetensors")
		if err != nil {
			if !strings.Contains(err.Error(), "x.safetensors") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		hlen := int64(binary.LittleEndian.Uint64(b))
		dataStart := 8 + hlen
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(b[8:dataStart], &keys); err != nil || keys == nil { // null unmarshals to a nil map
			t.Fatalf("accepted a header that is not a JSON object: %q, %v", b[8:dataStart], err)
		}
		delete(keys, "__metadata__")
		if len(keys) != len(st.tensors) {
			t.Fatalf("header has %d tensors, parser returned %d", len(keys), len(st.tensors))
		}
		for i, m := range st.tensors {
			if _, ok := keys[m.Name]; !ok {
				t.Fatalf("tensor %q is not a header key", m.Name)
			}
			if i > 0 && st.tensors[i-1].Name >= m.Name {
				t.Fatalf("tensors not sorted by name: %q then %q", st.tensors[i-1].Name, m.Name)
			}
			if m.DType.size() == 0 || len(m.Shape) > maxTensorDims {
				t.Fatalf("tensor %q: dtype %q, shape %v accepted", m.Name, m.DType, m.Shape)
			}
			elems := int64(1)
			for _, d := range m.Shape {
				elems *= d
			}
			if m.Size != elems*int64(m.DType.size()) {
				t.Fatalf("tensor %q: %d bytes for %s%v", m.Name, m.Size, m.DType, m.Shape)
			}
			if m.Begin < dataStart || m.Size < 0 || m.Begin+m.Size > int64(len(b)) {
				t.Fatalf("tensor %q: bytes [%d,%d) outside the data section [%d,%d)", m.Name, m.Begin, m.Begin+m.Size, dataStart, len(b))
			}
			dst := make([]float32, m.Size/int64(m.DType.size()))
			decodeInto(m.DType, b[m.Begin:m.Begin+m.Size], dst)
		}
		if len(st.tensors) > 1000 {
			return // the pairwise check below is quadratic
		}
		for i, x := range st.tensors {
			for _, y := range st.tensors[i+1:] {
				if x.Size > 0 && y.Size > 0 && x.Begin < y.Begin+y.Size && y.Begin < x.Begin+x.Size {
					t.Fatalf("tensors %q [%d,%d) and %q [%d,%d) overlap", x.Name, x.Begin, x.Begin+x.Size, y.Name, y.Begin, y.Begin+y.Size)
				}
			}
		}
	})
}

// FuzzCheckpointIndex checks OpenCheckpoint on arbitrary
// model.safetensors.index.json files over two fixed shards: it opens or
// fails with an error, and an opened checkpoint holds exactly the index's
// weight map, each tensor in the shard the map names.
func FuzzCheckpointIndex(f *testing.F) {
	const s1, s2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"
	shards := map[string]map[string]stTensor{
		s1: {"a": {shape: []int64{2}, data: []float32{1, 2}}, "b": {shape: []int64{1, 1}, data: []float32{3}, dtype: DTypeBF16}},
		s2: {"c": {shape: []int64{0}}, "d": {shape: []int64{3}, data: []float32{4, 5, 6}, dtype: DTypeF16}},
	}
	images := map[string][]byte{}
	for n, ts := range shards {
		images[n] = safetensorsBytes(f, ts)
	}
	for _, s := range []string{
		`{"metadata":{"total_size":18},"weight_map":{"a":"` + s1 + `","b":"` + s1 + `","c":"` + s2 + `","d":"` + s2 + `"}}`,
		`{"weight_map":{"a":"` + s1 + `","b":"` + s1 + `"}}`,
		`{"weight_map":{"a":"` + s2 + `","b":"` + s1 + `","c":"` + s2 + `","d":"` + s2 + `"}}`,
		`{"weight_map":{"a":"../` + s1 + `"}}`,
		`{"weight_map":{"a":"model.safetensors.index.json"}}`,
		`{"weight_map":{}}`,
		`{"weight_map":null}`,
		`{"weight_map":{"a":1}}`,
		`null`,
		``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, index string) {
		dir := t.TempDir()
		for n, b := range images {
			if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "model.safetensors.index.json"), []byte(index), 0o644); err != nil {
			t.Fatal(err)
		}
		ck, err := OpenCheckpoint(dir)
		if err != nil {
			return
		}
		defer ck.Close()
		var idx struct {
			WeightMap map[string]string `json:"weight_map"`
		}
		if err := json.Unmarshal([]byte(index), &idx); err != nil {
			t.Fatalf("opened with an index that does not decode: %v", err)
		}
		if len(ck.Tensors) != len(idx.WeightMap) {
			t.Fatalf("%d tensors for a weight map of %d", len(ck.Tensors), len(idx.WeightMap))
		}
		for _, m := range ck.Tensors {
			if p, ok := idx.WeightMap[m.Name]; !ok || filepath.Join(dir, p) != m.File {
				t.Fatalf("tensor %q from %s; the index says %q", m.Name, m.File, p)
			}
		}
	})
}

// oracleConfigs returns the config.json files transformers saved for the
// fixture models, as the oracle run logged them.
func oracleConfigs(t testing.TB) []string {
	t.Helper()
	fh, err := os.Open("../../docs/results/h200-run294-oracle.log")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []string
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if s, ok := strings.CutPrefix(sc.Text(), "config: "); ok {
			out = append(out, s)
		}
	}
	if err := sc.Err(); err != nil || len(out) == 0 {
		t.Fatalf("no configs in the oracle log (%v)", err)
	}
	return out
}

// FuzzHFConfig checks config.json → Spec on arbitrary JSON: parseHFConfig
// and specFromHF return a Spec or an error, and an accepted Spec passes
// Validate, has a Plan, and its GGUF metadata (Metadata, with a tensor for
// each main layer) loads through model.ConfigFromGGUF as the same model.
//
// Seeds: the configs transformers saved for the fixtures (from the oracle
// log), the test checkpoints' configs, and a multimodal wrapper.
func FuzzHFConfig(f *testing.F) {
	for _, s := range oracleConfigs(f) {
		f.Add([]byte(s))
	}
	for _, d := range []tinyDims{qwen35Dims(), qwen3Dims()} {
		dir := f.TempDir()
		writeCheckpoint(f, dir, d, nil)
		b, err := os.ReadFile(filepath.Join(dir, "config.json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"architectures":["Qwen3_5ForConditionalGeneration"],"text_config":{"vocab_size":8,"hidden_size":8,"intermediate_size":8,"num_hidden_layers":2,"num_attention_heads":2,"num_key_value_heads":1,"head_dim":4,"max_position_embeddings":64,"rms_norm_eps":1e-6,"rope_theta":1e6,"linear_conv_kernel_dim":4,"linear_key_head_dim":4,"linear_value_head_dim":4,"linear_num_key_heads":1,"linear_num_value_heads":2,"full_attention_interval":2,"mtp_num_hidden_layers":1}}`))
	f.Add([]byte(`{"architectures":["Qwen3ForCausalLM"],"vocab_size":1,"hidden_size":1,"intermediate_size":1,"num_hidden_layers":1,"num_attention_heads":1,"num_key_value_heads":1,"head_dim":2,"max_position_embeddings":1,"rms_norm_eps":1e-39,"rope_theta":1e39}`))
	f.Add([]byte(`null`))
	f.Fuzz(checkHFConfig)
}

// FuzzSpecDims is FuzzHFConfig on configs whose numbers are fuzzed as
// numbers (a byte mutator seldom turns "128" into a large or negative one):
// the transformers config of qwen35-tiny (from the oracle log) with its
// dimensions replaced, as qwen3 when qwen3 is set.
func FuzzSpecDims(f *testing.F) {
	var base map[string]any
	if err := json.Unmarshal([]byte(oracleConfigs(f)[0]), &base); err != nil {
		f.Fatal(err)
	}
	keys := []string{"vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
		"num_key_value_heads", "head_dim", "max_position_embeddings", "linear_conv_kernel_dim", "linear_key_head_dim",
		"linear_value_head_dim", "linear_num_key_heads", "linear_num_value_heads"}
	// qwen35-tiny's dims, and qwen3Dims.
	f.Add(int64(512), int64(64), int64(128), int64(4), int64(2), int64(1), int64(256), int64(4096), int64(4), int64(128), int64(128), int64(2), int64(4), int64(2), 0.25, false, false)
	f.Add(int64(40), int64(32), int64(32), int64(2), int64(4), int64(2), int64(8), int64(4096), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), 0.0, true, false)
	f.Fuzz(func(t *testing.T, vocab, hidden, ff, layers, heads, kv, headDim, ctx, conv, dk, dv, hk, hv, interval int64, prf float64, qwen3, mtp bool) {
		cfg := maps.Clone(base)
		for i, v := range []int64{vocab, hidden, ff, layers, heads, kv, headDim, ctx, conv, dk, dv, hk, hv} {
			cfg[keys[i]] = v
		}
		delete(cfg, "layer_types")
		cfg["full_attention_interval"] = interval
		rp := maps.Clone(cfg["rope_parameters"].(map[string]any))
		rp["partial_rotary_factor"] = prf
		cfg["rope_parameters"] = rp
		if mtp {
			cfg["mtp_num_hidden_layers"] = 1
		}
		if qwen3 {
			cfg["architectures"] = []string{"Qwen3ForCausalLM"}
		}
		b, err := json.Marshal(cfg)
		if err != nil {
			return // prf is NaN or infinite, which JSON cannot hold
		}
		checkHFConfig(t, b)
	})
}

// checkHFConfig is FuzzHFConfig's check of one config.json.
func checkHFConfig(t *testing.T, b []byte) {
	c, err := parseHFConfig(b, "config.json")
	if err != nil {
		return
	}
	s, err := specFromHF(c, "config.json")
	if err != nil {
		if !strings.HasPrefix(err.Error(), "config.json: ") {
			t.Fatalf("error does not name the file: %v", err)
		}
		return
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("specFromHF accepted a Spec that Validate rejects: %v", err)
	}
	if _, err := Plan(s); err != nil {
		t.Fatalf("accepted Spec has no plan: %v", err)
	}
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf, 3)
	for _, kv := range Metadata(s, FileF32, "x") {
		w.SetKV(kv.Key, kv.Value)
	}
	// ConfigFromGGUF reads the vocabulary from token_embd's rows and
	// requires blk.i tensors for the main layers; their sizes do not
	// matter to it, so they are tiny.
	w.AddTensorBytes("token_embd.weight", gguf.TypeF32, []uint64{1, uint64(min(s.NVocab, 4))}, make([]byte, 4*min(s.NVocab, 4)))
	for il := range s.NLayer {
		w.AddTensorBytes("blk."+strconv.Itoa(il)+".attn_norm.weight", gguf.TypeF32, []uint64{1}, make([]byte, 4))
	}
	if err := w.Write(); err != nil {
		t.Fatalf("writing the metadata: %v", err)
	}
	g, err := gguf.Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("reading the metadata back: %v", err)
	}
	mc, err := model.ConfigFromGGUF(g)
	if err != nil {
		t.Fatalf("the converter accepts this config, but the loader rejects its metadata: %v", err)
	}
	if mc.NLayer != s.NLayer || mc.NNextN != s.NMTP || mc.NEmbd != s.NEmbd || mc.NFF != s.NFF ||
		mc.NHead != s.NHead || mc.NHeadKV != s.NHeadKV || mc.HeadDimK != s.HeadDim || mc.NRot != s.RopeDims {
		t.Fatalf("loader reads %+v from spec %+v", mc, s)
	}
	if s.Arch == ArchQwen35 {
		if mc.SSMConvKernel != s.ConvKernel || mc.SSMStateSize != s.SSMKHeadDim || mc.SSMGroupCount != s.SSMKHeads ||
			mc.SSMNumVHeads != s.SSMVHeads || mc.SSMHeadDimV != s.SSMVHeadDim {
			t.Fatalf("loader reads SSM dims %+v from spec %+v", mc, s)
		}
		for i, rec := range s.Recurrent {
			if (mc.Kinds[i] == model.LayerRecurrent) != rec {
				t.Fatalf("layer %d: loader's kind %v, spec recurrent %v", i, mc.Kinds[i], rec)
			}
		}
	}
}

// smallRealTokenizer cuts testdata's Qwen3 tokenizer.json down to its first
// n vocabulary entries, the merges among them and its added tokens
// (renumbered after them), keeping every other field as it is.
func smallRealTokenizer(t testing.TB, n int) []byte {
	t.Helper()
	b := qwen3TokenizerJSON(t)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(top["model"], &m); err != nil {
		t.Fatal(err)
	}
	var vocab map[string]int
	var merges [][]string
	if err := json.Unmarshal(m["vocab"], &vocab); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(m["merges"], &merges); err != nil {
		t.Fatal(err)
	}
	small := map[string]int{}
	for s, id := range vocab {
		if id < n {
			small[s] = id
		}
	}
	var keep [][]string
	for _, p := range merges {
		_, a := small[p[0]]
		_, b := small[p[1]]
		_, c := small[p[0]+p[1]]
		if a && b && c {
			keep = append(keep, p)
		}
	}
	var added []map[string]any
	if err := json.Unmarshal(top["added_tokens"], &added); err != nil {
		t.Fatal(err)
	}
	for i, a := range added[:min(len(added), 8)] {
		a["id"] = n + i
	}
	set := func(dst map[string]json.RawMessage, k string, v any) {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		dst[k] = raw
	}
	set(m, "vocab", small)
	set(m, "merges", keep)
	set(top, "model", m)
	set(top, "added_tokens", added[:min(len(added), 8)])
	out, err := json.Marshal(top)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// FuzzReadVocab checks ReadVocab on arbitrary tokenizer.json and
// tokenizer_config.json files: it returns a Vocab or an error, and an
// accepted Vocab has nVocab tokens of llama.cpp's converter types, special
// ids inside the vocabulary, metadata that gguf writes and reads back, and
// Check either reports why the tokenizer does not load or the tokenizer
// loads with nVocab tokens, each of which decodes.
//
// Seeds: Qwen3's tokenizer.json cut to its first 300 tokens (byte tokens
// and the merges among them) with its tokenizer_config.json, the test
// checkpoints' tokenizer, and hand-made edge cases.
func FuzzReadVocab(f *testing.F) {
	realCfg, err := os.ReadFile(filepath.Join(tokenizerTestdata, "tokenizer_config.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(smallRealTokenizer(f, 300), realCfg, uint16(320))
	dir := f.TempDir()
	writeTokenizer(f, dir, 24)
	tj, err1 := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	tc, err2 := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	if err1 != nil || err2 != nil {
		f.Fatal(err1, err2)
	}
	f.Add(tj, tc, uint16(24))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0,"b":0}}}`), []byte(`{}`), uint16(2))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{"a":0},"merges":[["a","a"],"a a",[1]]},"added_tokens":[{"id":1,"content":"<|x|>"}]}`), []byte(`{"eos_token":{"content":"<|x|>"},"add_eos_token":true}`), uint16(3))
	f.Add([]byte(`{"model":{"type":"BPE","vocab":{}},"post_processor":{"type":"Sequence","processors":[{"type":"TemplateProcessing"}]}}`), []byte(`null`), uint16(1))
	f.Fuzz(func(t *testing.T, tokJSON, cfgJSON []byte, n uint16) {
		nVocab := int(n)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), tokJSON, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "tokenizer_config.json"), cfgJSON, 0o644); err != nil {
			t.Fatal(err)
		}
		v, err := ReadVocab(dir, nVocab)
		if err != nil {
			return
		}
		if len(v.Tokens) != nVocab || len(v.Types) != nVocab {
			t.Fatalf("%d tokens, %d types for vocab_size %d", len(v.Tokens), len(v.Types), nVocab)
		}
		for i, typ := range v.Types {
			if !slices.Contains([]int32{TokenNormal, TokenControl, TokenUserDefined, TokenUnused}, typ) {
				t.Fatalf("token %d has type %d", i, typ)
			}
		}
		for _, kv := range v.Special {
			if id, ok := kv.Value.Uint64(); ok && id >= uint64(nVocab) && strings.HasSuffix(kv.Key, "_id") {
				t.Fatalf("%s = %d is outside the vocabulary of %d", kv.Key, id, nVocab)
			}
		}
		var buf bytes.Buffer
		w := gguf.NewWriter(&buf, 3)
		for _, kv := range v.KVs("qwen2") {
			w.SetKV(kv.Key, kv.Value)
		}
		if err := w.Write(); err != nil {
			t.Fatalf("writing the vocabulary: %v", err)
		}
		g, err := gguf.Parse(buf.Bytes())
		if err != nil {
			t.Fatalf("reading the vocabulary back: %v", err)
		}
		if v.Check("qwen2") != nil {
			return
		}
		tok, err := tokenizer.FromGGUF(g)
		if err != nil {
			t.Fatalf("Check passed but FromGGUF fails: %v", err)
		}
		if tok.Vocab() != nVocab {
			t.Fatalf("tokenizer has %d tokens, vocab_size %d", tok.Vocab(), nVocab)
		}
		for id := range int32(nVocab) {
			if _, err := tok.Decode([]int32{id}); err != nil {
				t.Fatalf("Decode(%d): %v", id, err)
			}
		}
	})
}

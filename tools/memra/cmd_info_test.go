package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/memra-ai/memra/gguf"
)

// writeInfoFixture writes a small GGUF with the writer: a 20-token vocab,
// a long string, a float, and three tensors of different types.
func writeInfoFixture(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf, 3)
	w.SetKV("general.architecture", gguf.StringValue("qwen35"))
	w.SetKV("qwen35.block_count", gguf.Uint32Value(2))
	w.SetKV("qwen35.rope.freq_base", gguf.Float32Value(1e7))
	toks := []string{"!", "\"", "#", "$", "%", "&", "'", "(", ")", "*", "+", ",", "-", ".", "/", "0", "1", "2", "3", "4"}
	w.SetKV("tokenizer.ggml.tokens", gguf.StringsValue(toks))
	w.SetKV("tokenizer.chat_template", gguf.StringValue(strings.Repeat("{% x %}", 40)))
	w.SetKV("t.nested", gguf.ArrayValue(gguf.ValueArray, gguf.Int32sValue([]int32{1, -2})))
	w.AddTensorBytes("token_embd.weight", gguf.TypeQ8_0, []uint64{64, 20}, make([]byte, 34*2*20))
	w.AddTensorBytes("output_norm.weight", gguf.TypeF32, []uint64{64}, make([]byte, 256))
	w.AddTensorBytes("blk.0.attn_q.weight", gguf.TypeQ8_0, []uint64{64, 3}, make([]byte, 34*2*3))
	w.AddTensorBytes("blk.0.ffn_up.weight", gguf.TypeBF16, []uint64{5, 3, 2}, make([]byte, 60))
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tiny.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestInfoText(t *testing.T) {
	path := writeInfoFixture(t)
	var out, errb bytes.Buffer
	if err := infoCmd().run([]string{path}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	// Sizes worked out by hand: Q8_0 64×20 = 40 blocks × 34 B = 1360;
	// F32 64 × 4 = 256; Q8_0 64×3 = 6 × 34 = 204; BF16 30 × 2 = 60.
	// Offsets: 0, 1376 (1360 padded to 32), 1632, 1856.
	checks := []string{
		"version:    GGUF v3",
		"metadata (6 keys):",
		`[20 strings: "!", "\"", "#", ...]`,
		"1e+07",
		"... (280 bytes)",
		"[[1, -2]]",
		"tensors (4;",
		"[64 20]", "[5 3 2]",
		"tensors:     4",
		// 64·20 + 64 + 64·3 + 5·3·2 = 1280 + 64 + 192 + 30 = 1566
		"parameters:  1566 (1.57K)",
		// 1360 + 256 + 204 + 60 = 1880
		"bytes:       1880 (1.88 kB)",
	}
	for _, want := range checks {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	// Tensor rows: name, type, shape, offset, bytes.
	for _, row := range [][]string{
		{"token_embd.weight", "Q8_0", "[64 20]", "0", "1360"},
		{"output_norm.weight", "F32", "[64]", "1376", "256"},
		{"blk.0.attn_q.weight", "Q8_0", "[64 3]", "1632", "204"},
		{"blk.0.ffn_up.weight", "BF16", "[5 3 2]", "1856", "60"},
		{"Q8_0", "2", "1472", "1564"},
		{"F32", "1", "64", "256"},
	} {
		if !hasRow(text, row) {
			t.Errorf("no line with fields %q in:\n%s", row, text)
		}
	}
}

// hasRow reports whether some line's fields start with want.
func hasRow(text string, want []string) bool {
	for _, line := range strings.Split(text, "\n") {
		f := joinShape(strings.Fields(line))
		if len(f) >= len(want) && strings.Join(f[:len(want)], "\x00") == strings.Join(want, "\x00") {
			return true
		}
	}
	return false
}

func TestInfoJSON(t *testing.T) {
	path := writeInfoFixture(t)
	var out, errb bytes.Buffer
	if err := infoCmd().run([]string{"--json", path}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	var got struct {
		File       string `json:"file"`
		Version    int    `json:"version"`
		Alignment  int    `json:"alignment"`
		DataOffset int64  `json:"data_offset"`
		Metadata   []struct {
			Key       string `json:"key"`
			Type      string `json:"type"`
			Count     *int   `json:"count"`
			Truncated bool   `json:"truncated"`
			Value     any    `json:"value"`
		} `json:"metadata"`
		Tensors []struct {
			Name     string   `json:"name"`
			Type     string   `json:"type"`
			Shape    []uint64 `json:"shape"`
			Elements uint64   `json:"elements"`
			Offset   uint64   `json:"offset"`
			Bytes    uint64   `json:"bytes"`
		} `json:"tensors"`
		Totals struct {
			Tensors    int    `json:"tensors"`
			Parameters uint64 `json:"parameters"`
			Bytes      uint64 `json:"bytes"`
			ByType     []struct {
				Type    string `json:"type"`
				Tensors int    `json:"tensors"`
				Bytes   uint64 `json:"bytes"`
			} `json:"by_type"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if got.File != path || got.Version != 3 || got.Alignment != 32 || got.DataOffset%32 != 0 {
		t.Errorf("header %+v", got)
	}
	if len(got.Metadata) != 6 || got.Metadata[0].Key != "general.architecture" || got.Metadata[0].Value != "qwen35" {
		t.Fatalf("metadata %+v", got.Metadata)
	}
	if m := got.Metadata[2]; m.Type != "float32" || m.Value != 1e7 {
		t.Errorf("freq_base %+v", m)
	}
	tok := got.Metadata[3]
	if tok.Type != "[]string" || tok.Count == nil || *tok.Count != 20 || !tok.Truncated || len(tok.Value.([]any)) != 16 {
		t.Errorf("tokens entry %+v", tok)
	}
	if n := got.Metadata[5]; n.Type != "[][]int32" || len(n.Value.([]any)) != 1 {
		t.Errorf("nested entry %+v", n)
	}
	if len(got.Tensors) != 4 || got.Tensors[1].Name != "output_norm.weight" || got.Tensors[1].Offset != 1376 || got.Tensors[3].Elements != 30 {
		t.Errorf("tensors %+v", got.Tensors)
	}
	if got.Totals.Tensors != 4 || got.Totals.Parameters != 1566 || got.Totals.Bytes != 1880 {
		t.Errorf("totals %+v", got.Totals)
	}
	// by_type in type id order: F32 (0), Q8_0 (8), BF16 (30).
	if bt := got.Totals.ByType; len(bt) != 3 || bt[0].Type != "F32" || bt[1].Type != "Q8_0" || bt[1].Tensors != 2 || bt[1].Bytes != 1564 || bt[2].Type != "BF16" {
		t.Errorf("by_type %+v", got.Totals.ByType)
	}

	// --full keeps every element.
	out.Reset()
	if err := infoCmd().run([]string{"--json", "--full", path}, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"4"`) || strings.Contains(out.String(), `"truncated"`) {
		t.Errorf("--full output still truncated")
	}
}

func TestInfoErrors(t *testing.T) {
	var out, errb bytes.Buffer
	missing := filepath.Join(t.TempDir(), "nope.gguf")
	err := infoCmd().run([]string{missing}, &out, &errb)
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("error %v should name %s", err, missing)
	}
	bad := filepath.Join(t.TempDir(), "bad.gguf")
	if err := os.WriteFile(bad, []byte("GGUF\x01\x00\x00\x00 and more bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := infoCmd().run([]string{bad}, &out, &errb); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("error %v should name %s", err, bad)
	}
	if err := infoCmd().run(nil, &out, &errb); !errors.Is(err, errUsage) {
		t.Errorf("no args: %v, want errUsage", err)
	}
	errb.Reset()
	out.Reset()
	if err := infoCmd().run([]string{"-h"}, &out, &errb); err == nil || !strings.Contains(out.String(), "memra info") || errb.Len() != 0 {
		t.Errorf("-h: %v, stdout %q, stderr %q", err, out.String(), errb.String())
	}
}

// joinShape rejoins a "[64 20]" shape that Fields split.
func joinShape(f []string) []string {
	var out []string
	for i := 0; i < len(f); i++ {
		if strings.HasPrefix(f[i], "[") && !strings.HasSuffix(f[i], "]") {
			j := i
			for j < len(f)-1 && !strings.HasSuffix(f[j], "]") {
				j++
			}
			out = append(out, strings.Join(f[i:j+1], " "))
			i = j
			continue
		}
		out = append(out, f[i])
	}
	return out
}

// TestInfoFlagAfterFile: the README writes "memra info model.gguf [--json]";
// a flag after the file must act as one before it.
func TestInfoFlagAfterFile(t *testing.T) {
	path := writeInfoFixture(t)
	var before, after, errb bytes.Buffer
	if err := infoCmd().run([]string{"--json", path}, &before, &errb); err != nil {
		t.Fatal(err)
	}
	if err := infoCmd().run([]string{path, "--json"}, &after, &errb); err != nil {
		t.Fatal(err)
	}
	if before.String() != after.String() || !strings.HasPrefix(after.String(), "{") {
		t.Errorf("info FILE --json printed %q, info --json FILE %q", after.String()[:min(80, after.Len())], before.String()[:min(80, before.Len())])
	}
}

func TestParseInterspersed(t *testing.T) {
	for _, c := range []struct {
		args []string
		pos  string
		json bool
	}{
		{[]string{"a.gguf"}, "a.gguf", false},
		{[]string{"--json", "a.gguf"}, "a.gguf", true},
		{[]string{"a.gguf", "--json"}, "a.gguf", true},
		{[]string{"a", "--json", "b"}, "a b", true},
		{[]string{"a", "--", "--json"}, "a --json", false},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		js := fs.Bool("json", false, "")
		pos, err := parseInterspersed(fs, c.args)
		if err != nil || strings.Join(pos, " ") != c.pos || *js != c.json {
			t.Errorf("%q: positional %q json %v err %v, want %q %v", c.args, pos, *js, err, c.pos, c.json)
		}
	}
}

// TestInfoQuotesNames: a key or tensor name with control characters (an
// escape sequence, a tab, a newline) is printed quoted, so that a file can
// neither drive the terminal nor break the table.
func TestInfoQuotesNames(t *testing.T) {
	// The file's own name too, where the system allows control characters.
	name, quoted := "names\x1b[2J.gguf", `names\x1b[2J.gguf"`
	if runtime.GOOS == "windows" {
		name, quoted = "names.gguf", "names.gguf"
	}
	path := filepath.Join(t.TempDir(), name)
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := gguf.NewWriter(out, 3)
	w.SetKV("\x1b[31mred\x1b[0m", gguf.StringValue("x"))
	w.SetKV("plain.key", gguf.StringValue("y"))
	w.SetKV("bad\xffkey", gguf.StringValue("z")) // invalid UTF-8; 0xff is also tabwriter's escape byte
	w.AddTensorBytes("title\x1b]2;pwned\x07\r\n\tx", gguf.TypeF32, []uint64{1}, make([]byte, 4))
	if err := errors.Join(w.Write(), out.Close()); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := infoCmd().run([]string{path}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	text := stdout.String()
	if strings.ContainsAny(text, "\x1b\x07\r") || strings.Contains(text, "\xff") {
		t.Errorf("raw control characters in the output:\n%q", text)
	}
	for _, want := range []string{`"\x1b[31mred\x1b[0m"`, `"bad\xffkey"`, `"title\x1b]2;pwned\a\r\n\tx"`, "  plain.key ", quoted} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %s:\n%s", want, text)
		}
	}
}

// TestInfoHelpNamesJSONKeys: memra help info lists every key --json can
// print, so a script's author need not read the source.
func TestInfoHelpNamesJSONKeys(t *testing.T) {
	var help bytes.Buffer
	if code := run([]string{"help", "info"}, &help, io.Discard); code != 0 {
		t.Fatalf("memra help info: exit %d", code)
	}
	text := strings.Join(strings.Fields(help.String()), " ")
	for _, v := range []any{infoJSON{}, infoKV{}, infoTensor{}, infoTotalsJSON{}, infoTypeJSON{}} {
		rt := reflect.TypeOf(v)
		for i := range rt.NumField() {
			key, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if !regexp.MustCompile(`\b` + key + `\b`).MatchString(text) {
				t.Errorf("memra help info does not name --json's key %q (%s.%s)", key, rt.Name(), rt.Field(i).Name)
			}
		}
	}
}

// TestInfoJSONNestedTruncated: --json marks an entry truncated when any of
// its arrays is cut, an inner one included; before, an array of one array
// of 20 values showed 16 of them with no "truncated".
func TestInfoJSONNestedTruncated(t *testing.T) {
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf, 3)
	inner := make([]int32, 20)
	w.SetKV("t.nested", gguf.ArrayValue(gguf.ValueArray, gguf.Int32sValue(inner)))
	w.SetKV("t.short", gguf.ArrayValue(gguf.ValueArray, gguf.Int32sValue(inner[:3])))
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nested.gguf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, full := range []bool{false, true} {
		args := []string{"--json", path}
		if full {
			args = append(args, "--full")
		}
		var out bytes.Buffer
		if err := infoCmd().run(args, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Metadata []struct {
				Key       string    `json:"key"`
				Truncated bool      `json:"truncated"`
				Value     [][]int32 `json:"value"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if len(got.Metadata) != 2 {
			t.Fatalf("metadata %+v", got.Metadata)
		}
		n, s := got.Metadata[0], got.Metadata[1]
		if shown := len(n.Value[0]); n.Truncated != (shown < 20) || shown != map[bool]int{false: jsonArrayLimit, true: 20}[full] {
			t.Errorf("--full %v: %s shows %d of 20 values, truncated %v", full, n.Key, shown, n.Truncated)
		}
		if s.Truncated || len(s.Value[0]) != 3 {
			t.Errorf("--full %v: %s %+v", full, s.Key, s)
		}
	}
}

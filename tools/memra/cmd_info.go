package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/memra-ai/memra/gguf"
	"github.com/memra-ai/memra/tools/internal/sticky"
)

func infoCmd() command {
	return command{
		name:    "info",
		summary: "show a GGUF file's metadata, tensors and totals",
		usage:   "[--json] [--full] FILE.gguf",
		run:     runInfo,
	}
}

// infoJSON is the --json output. The schema is stable: fields are only
// ever added, never renamed or removed.
//
//	{
//	  "file": "model.gguf", "version": 3, "alignment": 32,
//	  "data_offset": 7340032,          // file offset of the data section
//	  "file_size": 123456789,
//	  "metadata": [                    // file order
//	    {"key": "general.architecture", "type": "string", "value": "qwen35"},
//	    {"key": "tokenizer.ggml.tokens", "type": "[]string", "count": 151936,
//	     "truncated": true, "value": ["!", "\"", ...]}   // first 16 unless --full
//	  ],
//	  "tensors": [                     // file order
//	    {"name": "token_embd.weight", "type": "Q8_0", "shape": [1024, 151936],
//	     "elements": 155582464, "offset": 0, "bytes": 165306368}
//	  ],
//	  "totals": {"tensors": 1, "parameters": 155582464, "bytes": 165306368,
//	    "by_type": [{"type": "Q8_0", "tensors": 1, "parameters": 155582464, "bytes": 165306368}]}
//	}
//
// Types are GGUF value type names ("uint32", "string", "[]int32",
// "[][]string"). Integers are JSON numbers (uint64/int64 exact as digits),
// floats are numbers except NaN and ±Inf, written as the strings "NaN",
// "+Inf", "-Inf". Shapes are in ggml ne order (innermost dimension first);
// tensor offsets are relative to data_offset. by_type is in ggml type id
// order.
type infoJSON struct {
	File       string         `json:"file"`
	Version    uint32         `json:"version"`
	Alignment  uint64         `json:"alignment"`
	DataOffset int64          `json:"data_offset"`
	FileSize   int64          `json:"file_size"`
	Metadata   []infoKV       `json:"metadata"`
	Tensors    []infoTensor   `json:"tensors"`
	Totals     infoTotalsJSON `json:"totals"`
}

type infoKV struct {
	Key       string `json:"key"`
	Type      string `json:"type"`
	Count     *int   `json:"count,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	Value     any    `json:"value"`
}

type infoTensor struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Shape    []uint64 `json:"shape"`
	Elements uint64   `json:"elements"`
	Offset   uint64   `json:"offset"`
	Bytes    uint64   `json:"bytes"`
}

type infoTotalsJSON struct {
	Tensors    int            `json:"tensors"`
	Parameters uint64         `json:"parameters"`
	Bytes      uint64         `json:"bytes"`
	ByType     []infoTypeJSON `json:"by_type"`
}

type infoTypeJSON struct {
	Type       string `json:"type"`
	Tensors    int    `json:"tensors"`
	Parameters uint64 `json:"parameters"`
	Bytes      uint64 `json:"bytes"`
}

// jsonArrayLimit is how many array elements --json shows without --full.
const jsonArrayLimit = 16

// textArrayLimit: arrays longer than this are summarised in text output.
const textArrayLimit = 8

// textStringLimit: strings longer than this (bytes) are cut in text output.
const textStringLimit = 120

func runInfo(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("info", infoCmd().usage, `Shows a GGUF file's metadata (long arrays summarised), its tensor table
(name, type, shape in ggml order, offset, bytes) and totals by type.

--json prints one object, whose keys are only ever added to: file,
version, alignment, data_offset (where the data section starts), file_size;
metadata, in file order: {key, type, value} (type a GGUF value type name:
"uint32", "string", "[]int32"; arrays add count, and truncated when only
their first 16 values are shown, all with --full); tensors, in file order:
{name, type, shape (ggml order, innermost first), elements, offset (from
data_offset), bytes}; totals: {tensors, parameters, bytes, by_type: [{type,
tensors, parameters, bytes}]}. Integers are exact JSON numbers; a float NaN
or infinity is the string "NaN", "+Inf" or "-Inf".
`, `  memra info Qwen3.5-0.8B-Q8_0.gguf
  memra info model.gguf --json | jq '.totals'
`, stdout)
	asJSON := fs.Bool("json", false, "print JSON (its keys: above) instead of text")
	full := fs.Bool("full", false, "print every array element and whole strings")
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fmt.Errorf("%w: need exactly one FILE.gguf", errUsage)
	}
	path := files[0]
	f, err := gguf.Open(path)
	if err != nil {
		return err // gguf errors name the file
	}
	defer f.Close()
	info := describe(f, path, *full)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(info); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
	return printInfo(stdout, f, info, *full)
}

func describe(f *gguf.File, path string, full bool) *infoJSON {
	info := &infoJSON{
		File: path, Version: f.Version, Alignment: f.Alignment,
		DataOffset: f.DataOffset, FileSize: f.Size,
		Metadata: []infoKV{}, Tensors: []infoTensor{},
	}
	for _, kv := range f.KVs {
		e := infoKV{Key: kv.Key, Type: kv.Value.TypeName()}
		limit := jsonArrayLimit
		if full {
			limit = -1
		}
		if kv.Value.Type() == gguf.ValueArray {
			n := kv.Value.Len()
			e.Count = &n
		}
		e.Value, e.Truncated = jsonValue(kv.Value, limit)
		info.Metadata = append(info.Metadata, e)
	}
	byType := map[gguf.Type]*infoTypeJSON{}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		t := infoTensor{Name: ti.Name, Type: ti.Type.String(), Shape: ti.Shape, Elements: ti.Elements(), Offset: ti.Offset, Bytes: ti.Bytes()}
		if t.Shape == nil {
			t.Shape = []uint64{}
		}
		info.Tensors = append(info.Tensors, t)
		bt := byType[ti.Type]
		if bt == nil {
			bt = &infoTypeJSON{Type: t.Type}
			byType[ti.Type] = bt
		}
		bt.Tensors++
		bt.Parameters += t.Elements
		bt.Bytes += t.Bytes
		info.Totals.Tensors++
		info.Totals.Parameters += t.Elements
		info.Totals.Bytes += t.Bytes
	}
	info.Totals.ByType = []infoTypeJSON{}
	for id := range gguf.Type(gguf.NumTypes) {
		if bt := byType[id]; bt != nil {
			info.Totals.ByType = append(info.Totals.ByType, *bt)
		}
	}
	return info
}

// jsonValue converts a metadata value to JSON-encodable form, keeping at
// most limit elements of each array (all when limit < 0), and reports
// whether it cut any array, an inner one of an array of arrays included.
func jsonValue(v gguf.Value, limit int) (any, bool) {
	if v.Type() == gguf.ValueArray {
		n := v.Len()
		cut := limit >= 0 && n > limit
		if cut {
			n = limit
		}
		out := make([]any, n)
		for i := range out {
			var c bool
			out[i], c = jsonValue(v.Index(i), limit)
			cut = cut || c
		}
		return out, cut
	}
	return jsonScalar(v), false
}

// jsonScalar is jsonValue of a value that is not an array.
func jsonScalar(v gguf.Value) any {
	if x, ok := v.Float64(); ok {
		switch {
		case math.IsNaN(x):
			return "NaN"
		case math.IsInf(x, 1):
			return "+Inf"
		case math.IsInf(x, -1):
			return "-Inf"
		}
		if v.Type() == gguf.ValueFloat32 {
			// Print the shortest decimal that round-trips the float32.
			return json.Number(strconv.FormatFloat(x, 'g', -1, 32))
		}
		return x
	}
	return v.Any()
}

func printInfo(w io.Writer, f *gguf.File, info *infoJSON, full bool) error {
	ew := &sticky.Writer{W: w}
	fmt.Fprintf(ew, "file:       %s\n", safeName(info.File))
	fmt.Fprintf(ew, "version:    GGUF v%d\n", info.Version)
	fmt.Fprintf(ew, "alignment:  %d\n", info.Alignment)
	fmt.Fprintf(ew, "data:       offset %d, file size %s\n", info.DataOffset, humanBytes(uint64(info.FileSize)))

	fmt.Fprintf(ew, "\nmetadata (%d keys):\n", len(f.KVs))
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	for _, kv := range f.KVs {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", safeName(kv.Key), kv.Value.TypeName(), textValue(kv.Value, full))
	}
	tw.Flush()

	fmt.Fprintf(ew, "\ntensors (%d; shape in ggml order, innermost first; offset from the data section):\n", len(info.Tensors))
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  NAME\tTYPE\tSHAPE\tOFFSET\tBYTES\n")
	for _, t := range info.Tensors {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%d\n", safeName(t.Name), t.Type, shapeString(t.Shape), t.Offset, t.Bytes)
	}
	tw.Flush()

	fmt.Fprintf(ew, "\ntotals:\n")
	fmt.Fprintf(ew, "  tensors:     %d\n", info.Totals.Tensors)
	fmt.Fprintf(ew, "  parameters:  %d (%s)\n", info.Totals.Parameters, humanCount(info.Totals.Parameters))
	fmt.Fprintf(ew, "  bytes:       %d (%s)\n", info.Totals.Bytes, humanBytes(info.Totals.Bytes))
	tw = tabwriter.NewWriter(ew, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  TYPE\tTENSORS\tPARAMETERS\tBYTES\tSIZE\t\n")
	for _, bt := range info.Totals.ByType {
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%s\t\n", bt.Type, bt.Tensors, bt.Parameters, bt.Bytes, humanBytes(bt.Bytes))
	}
	tw.Flush()
	if ew.Err != nil {
		return fmt.Errorf("%s: write: %w", info.File, ew.Err)
	}
	return nil
}

// textValue renders a value for the text table: arrays longer than
// textArrayLimit become `[151936 strings: "!", "\"", "#", ...]`, long
// strings are cut with their length noted.
func textValue(v gguf.Value, full bool) string {
	if full {
		return v.Format(-1)
	}
	if s, ok := v.Str(); ok && len(s) > textStringLimit {
		cut := s[:textStringLimit]
		// Do not split a multi-byte rune (at most 3 trailing bytes).
		for range 3 {
			if r, size := utf8.DecodeLastRuneInString(cut); r != utf8.RuneError || size != 1 {
				break
			}
			cut = cut[:len(cut)-1]
		}
		return strconv.Quote(cut) + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return v.Format(textArrayLimit)
}

func shapeString(shape []uint64) string {
	parts := make([]string, len(shape))
	for i, d := range shape {
		parts[i] = strconv.FormatUint(d, 10)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// humanBytes is n in the largest decimal unit it reaches, as every size
// memra prints (its progress bars, convert's and synth's messages).
func humanBytes(n uint64) string {
	size, unit := decimalUnit(int64(min(n, math.MaxInt64)))
	if size == 1 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.2f %s", float64(n)/size, unit)
}

func humanCount(n uint64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.2fK", float64(n)/1e3)
	}
	return strconv.FormatUint(n, 10)
}

// safeName is a key or tensor name as the text output prints it: as it is
// when it is printable without tabs, else Go-quoted, so that a file cannot
// send escape sequences to the terminal or break the table.
func safeName(s string) string {
	if !utf8.ValidString(s) { // an invalid byte ranges as the printable U+FFFD
		return strconv.Quote(s)
	}
	for _, r := range s {
		if !unicode.IsPrint(r) || r == '\t' {
			return strconv.Quote(s)
		}
	}
	return s
}

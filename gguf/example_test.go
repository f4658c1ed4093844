package gguf_test

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/memra-ai/memra/gguf"
)

// Example writes a GGUF with two metadata keys and one F16 tensor, then
// reads it back: the writer takes data from a slice (AddTensorBytes) or a
// callback at Write time; Parse reads an image in memory as Open reads a
// mapped file.
func Example() {
	x := []float32{0.5, -1.25, 3, 0} // a {2, 2} matrix, row 0 first; each value exact in f16
	data := make([]byte, 2*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint16(data[2*i:], gguf.F32ToF16(v))
	}
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf, 3)
	w.SetKV("general.architecture", gguf.StringValue("qwen35"))
	w.SetKV("qwen35.block_count", gguf.Uint32Value(4))
	w.AddTensorBytes("token_embd.weight", gguf.TypeF16, []uint64{2, 2}, data) // ggml order: {row length, rows}
	if err := w.Write(); err != nil {
		fmt.Println(err)
		return
	}

	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	n, err := f.Uint32("block_count") // the getters add the architecture's prefix
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.Version, f.Arch(), n)
	ti, _ := f.Tensor("token_embd.weight")
	raw, err := f.Data(ti)
	if err != nil {
		fmt.Println(err)
		return
	}
	y := make([]float32, ti.Elements())
	if err := gguf.Dequantize(ti.Type, raw, y); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ti.Name, ti.Type, ti.Shape, y)
	// Output:
	// 3 qwen35 4
	// token_embd.weight F16 [2 2] [0.5 -1.25 3 0]
}

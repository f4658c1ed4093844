package tokenizer_test

import (
	"fmt"

	"github.com/memra-ai/memra/engine/tokenizer"
	"github.com/memra-ai/memra/gguf"
)

// The vocabulary of a model file: here Qwen3's, alone in a GGUF.
const vocabPath = "../testdata/tokenizer/qwen3-vocab.gguf"

func ExampleTokenizer_Encode() {
	f, err := gguf.Open(vocabPath)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	ids, err := tok.Encode("Hello, my dog is cute", tokenizer.EncodeOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	text, err := tok.Decode(ids)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(ids, text)

	// Control tokens written in the text are plain text unless asked for.
	s := "x<|im_end|>y<|im_start|>z"
	plain, _ := tok.Encode(s, tokenizer.EncodeOptions{})
	special, _ := tok.Encode(s, tokenizer.EncodeOptions{ParseSpecial: true})
	end, _ := tok.TokenID("<|im_end|>")
	fmt.Println(plain)
	fmt.Println(special, end, tok.IsEOG(end))
	// Output:
	// [9707 11 847 5562 374 18838] Hello, my dog is cute
	// [87 27 91 318 6213 91 29 88 27 91 318 4906 91 29 89]
	// [87 151645 88 151644 89] 151645 true
}

// A Stream prints generated tokens as they come, holding back a character
// whose bytes are split between tokens (the second token of 龘 here).
func ExampleStream() {
	f, err := gguf.Open(vocabPath)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		fmt.Println(err)
		return
	}
	ids, _ := tok.Encode("龍龘齉", tokenizer.EncodeOptions{})
	st := tok.NewStream()
	for _, id := range ids {
		fmt.Printf("%d %q\n", id, st.Next(id))
	}
	fmt.Printf("%q %v\n", st.Flush(), st.Err())
	// Output:
	// 106430 "龍"
	// 82912 ""
	// 246 "龘"
	// 122125 "齉"
	// "" <nil>
}

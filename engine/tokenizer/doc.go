// Package tokenizer is memra's byte-level BPE tokenizer, loaded from the
// tokenizer.* metadata of a GGUF file (tokenizer.ggml.model = "gpt2"), with a
// streaming detokenizer and the model's chat template.
//
// It reproduces llama.cpp's tokenizer on GGUF files: special and user-defined
// tokens are cut out of the text first (user-defined ones always, control
// ones only with EncodeOptions.ParseSpecial), each remaining fragment is
// split by the pre-tokenizer that tokenizer.ggml.pre names (a hand-written
// scanner per pattern, because Go's regexp has no lookahead), every piece is
// mapped to GPT-2's byte alphabet and merged by rank. Supported pre types:
//
//   - "qwen2" (Qwen2/Qwen3): (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|
//     ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//   - "qwen35" (Qwen3.5): the same with \p{M} joined to the letters,
//     [^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+ and ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*
//   - "llama-bpe" (Llama 3): llama.cpp's own scanner for the Llama 3 pattern
//     (digits in runs of up to three), merges ignored for whole-vocab words,
//     BOS added by default.
//
// The contractions match ASCII letters in either case, as llama.cpp spells
// them ('[sS] ...); Hugging Face's (?i) also folds U+017F (ſ) to s, so
// there "'ſt" splits as "'ſ", "t" and here as one piece.
//
// Hugging Face's tokenizer.json for Qwen normalises text to NFC before the
// split; llama.cpp does not. Encode follows llama.cpp unless EncodeOptions.NFC
// is set.
//
// Invalid UTF-8 in the input is not an error: like llama.cpp, every byte that
// is not part of a well-formed UTF-8 sequence is read as U+FFFD, so it is
// encoded (and decodes back) as "\uFFFD".
//
// A Tokenizer is immutable after construction and safe for concurrent use.
package tokenizer

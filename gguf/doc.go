// Package gguf reads and writes GGUF files (llama.cpp's model format, v2
// and v3, little-endian).
//
// Open maps a file read-only and parses only its header, metadata and tensor
// infos; tensor data stays on disk until a TensorData slice is touched, so
// opening a multi-gigabyte model costs milliseconds. Parse does the same
// for an image already in memory (tests, the fuzzer). Every count, length,
// offset and shape is checked against the file size before anything is
// allocated, and errors name the key or tensor and the byte offset.
//
// Metadata getters add the architecture prefix (Uint32("block_count") reads
// "qwen35.block_count"); see FullKey and the widening rules in getters.go.
//
// The ggml type table (Type, RowBytes) covers every id through 42.
// Dequantize converts F32, F16, BF16, F64, I8, I16, I32, Q4_0, Q4_1, Q5_0,
// Q5_1, Q8_0, Q8_1, the K-quants Q2_K..Q8_K, IQ4_NL and IQ4_XS to float32
// without allocating (no other type, I64 included); Quantize produces F32,
// F16, BF16, Q8_0, Q4_0, Q5_0, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS;
// Recode rewrites Q3_K as Q6_K and Q4_0, Q5_0 and IQ4_NL as Q8_0 with the
// same values.
//
// Writer streams a file: metadata and tensor infos first, then each
// tensor's data from a callback, padded to the alignment. Output is
// deterministic.
package gguf

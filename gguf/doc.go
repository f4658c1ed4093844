// Package gguf reads and writes GGUF files (llama.cpp's model format).
package gguf

module github.com/memra-ai/memra/gguf

go 1.26

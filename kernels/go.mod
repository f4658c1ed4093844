module github.com/memra-ai/memra/kernels

go 1.26

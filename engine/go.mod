module github.com/memra-ai/memra/engine

go 1.26

module github.com/memra-ai/memra/gen

go 1.26

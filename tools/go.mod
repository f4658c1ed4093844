module github.com/memra-ai/memra/tools

go 1.26

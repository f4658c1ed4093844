module github.com/memra-ai/memra/gen

go 1.26

require (
	github.com/dave/jennifer v1.7.1
	github.com/memra-ai/memra/kernels v0.0.0-00010101000000-000000000000
)

replace github.com/memra-ai/memra/kernels => ../kernels

module github.com/memra-ai/memra/tools

go 1.26.0

require (
	github.com/memra-ai/memra/engine v0.0.0-00010101000000-000000000000
	github.com/memra-ai/memra/gguf v0.0.0-00010101000000-000000000000
	github.com/memra-ai/memra/kernels v0.0.0-00010101000000-000000000000
)

require (
	github.com/ardanlabs/jinja v1.8.0 // indirect
	github.com/ebitengine/purego v0.11.3 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/text v0.31.0 // indirect
)

replace github.com/memra-ai/memra/engine => ../engine

replace github.com/memra-ai/memra/gguf => ../gguf

replace github.com/memra-ai/memra/kernels => ../kernels

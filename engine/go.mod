module github.com/memra-ai/memra/engine

go 1.26.0

require (
	github.com/ardanlabs/jinja v1.8.0
	github.com/ebitengine/purego v0.11.3
	golang.org/x/text v0.31.0
)

require golang.org/x/sys v0.50.0

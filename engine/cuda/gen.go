package cuda

//go:generate go run github.com/memra-ai/memra/gen/cmd/cudagen -driver -out driver_gen.go

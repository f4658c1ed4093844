package gpu

//go:generate go run github.com/memra-ai/memra/gen/cmd/cudagen -launchers -pkg gpu -out launch_gen.go

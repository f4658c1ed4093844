//go:build !amd64

package cpu

import "github.com/memra-ai/memra/gguf"

// simdDot has no vector kernels off amd64: the Go kernels run.
func simdDot(gguf.Type) (dotFunc, bool) { return nil, false }

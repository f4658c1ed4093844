package gguf

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// randBytes returns n random bytes, never all zero.
func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	if n > 0 && bytes.Count(b, []byte{0}) == n {
		b[0] = 1
	}
	return b
}

// build writes a file with w configured by setup and returns its bytes.
func build(t testing.TB, setup func(w *Writer)) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf, 3)
	setup(w)
	if err := w.Write(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func isNotFound(err error) bool { return errors.Is(err, ErrKeyNotFound) }

package sticky

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// failAfter takes n bytes, then fails every write.
type failAfter struct {
	buf bytes.Buffer
	n   int
}

var errFull = errors.New("no space left on device")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.buf.Len()+len(p) > f.n {
		k := f.n - f.buf.Len()
		f.buf.Write(p[:k])
		return k, errFull
	}
	return f.buf.Write(p)
}

// TestWriterKeepsFirstError: writes pass until one fails; that error is
// kept and returned by every later write, which writes nothing more.
func TestWriterKeepsFirstError(t *testing.T) {
	dst := &failAfter{n: 10}
	w := &Writer{W: dst}
	fmt.Fprint(w, "0123456")
	if w.Err != nil {
		t.Fatalf("after 7 of 10 bytes: %v", w.Err)
	}
	fmt.Fprint(w, "789abc")
	fmt.Fprint(w, "def")
	if !errors.Is(w.Err, errFull) {
		t.Errorf("Err = %v, want %v", w.Err, errFull)
	}
	if got := dst.buf.String(); got != "0123456789" {
		t.Errorf("written %q, want the 10 bytes before the failure and nothing after", got)
	}
	if n, err := w.Write([]byte("x")); n != 0 || !errors.Is(err, errFull) {
		t.Errorf("a write after the failure: %d, %v", n, err)
	}
}

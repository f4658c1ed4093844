package main

import "testing"

// TestCappedBufferKeepsWhatFits: a write past the cap keeps the bytes that
// fit. A pipe delivers the child's fatal error and its trace in chunks of
// any size; under load one read took all 5 KB at once, the 4 KB buffer kept
// nothing of it, and a recursing template was reported as "chat template: "
// instead of as a stack overflow.
func TestCappedBufferKeepsWhatFits(t *testing.T) {
	cancelled := false
	c := &cappedBuffer{max: 16, cancel: func() { cancelled = true }}
	if n, err := c.Write([]byte("fatal: ")); n != 7 || err != nil {
		t.Fatalf("first write: %d, %v", n, err)
	}
	n, err := c.Write([]byte("stack overflow and a long trace"))
	if n != 9 || err == nil || !c.over || !cancelled {
		t.Errorf("write past the cap: %d, %v, over %v, cancelled %v", n, err, c.over, cancelled)
	}
	if got := c.buf.String(); got != "fatal: stack ove" {
		t.Errorf("kept %q, want the first 16 bytes", got)
	}
	if n, err := c.Write([]byte("more")); n != 0 || err == nil || c.buf.Len() != 16 {
		t.Errorf("write when full: %d, %v, %d bytes kept", n, err, c.buf.Len())
	}
}

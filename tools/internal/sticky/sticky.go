// Package sticky has the writer the tools print through when they print as
// they go: it keeps the first write error, so that printing code stays
// linear and the error is checked once, at the end.
package sticky

import (
	"fmt"
	"io"
)

// Writer passes writes to W until one fails; Err is that failure, and
// every later write returns it without writing.
type Writer struct {
	W   io.Writer
	Err error
}

func (s *Writer) Write(p []byte) (int, error) {
	if s.Err != nil {
		return 0, s.Err
	}
	n, err := s.W.Write(p)
	s.Err = err
	return n, err
}

// Status folds the first failed write (Err) into a command's exit status:
// a run that would exit 0 with its output lost exits failed instead, the
// write's error under what; a non-zero status and an earlier error stand.
func (s *Writer) Status(code int, err error, failed int, what string) (int, error) {
	if s.Err == nil || err != nil {
		return code, err
	}
	if code == 0 {
		code = failed
	}
	return code, fmt.Errorf("%s: %w", what, s.Err)
}

package stickyio

import "io"

// Writer writes to W until a write fails; from then on it writes no more
// and returns that first error, so that text printed in many small writes
// is checked once, at the end. It is not safe for concurrent use.
type Writer struct {
	W   io.Writer
	err error
}

func (s *Writer) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.W.Write(p)
	s.err = err
	return n, err
}

// Err is the error of the write that failed, or nil.
func (s *Writer) Err() error { return s.err }

package stickyio

import "testing"

func TestWriterStopsAtTheFirstError(t *testing.T) {
	f := &failAfter{n: 1}
	w := &Writer{W: f}
	if _, err := w.Write([]byte("a")); err != nil || w.Err() != nil {
		t.Fatalf("first write: %v, Err %v; want both nil", err, w.Err())
	}
	_, err2 := w.Write([]byte("b"))
	n, err3 := w.Write([]byte("c"))
	if err2 == nil || err3 != err2 || n != 0 {
		t.Errorf("writes after the failure = %v, then %d, %v; want the first error again and nothing written", err2, n, err3)
	}
	if f.calls != 2 || f.buf.String() != "a" || w.Err() != err2 {
		t.Errorf("%d writes reached the stream (%q), Err %v; want 2, %q and %v", f.calls, f.buf.String(), w.Err(), "a", err2)
	}
}

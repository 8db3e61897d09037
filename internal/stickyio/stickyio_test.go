package stickyio

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

// failAfter writes n times, then fails every write with its own error.
type failAfter struct {
	n     int
	calls int
	buf   bytes.Buffer
}

func (f *failAfter) Write(p []byte) (int, error) {
	f.calls++
	if f.calls > f.n {
		return 0, errors.New("write " + string(rune('0'+f.calls)) + " failed")
	}
	return f.buf.Write(p)
}

func TestOutputRemembersTheFirstErrorAndGoesOn(t *testing.T) {
	f := &failAfter{n: 1}
	o := &Output{Ctx: context.Background(), W: f}
	o.Write([]byte("a"))
	_, err2 := o.Write([]byte("b"))
	_, err3 := o.Write([]byte("c"))
	if err2 == nil || err3 == nil || err3 == err2 {
		t.Fatalf("errors %v, %v; want each write tried and failed on its own", err2, err3)
	}
	if o.Err() != err2 {
		t.Errorf("Err = %v; want the first failure, %v", o.Err(), err2)
	}
}

func TestOutputRefusesOnceCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	refused := errors.New("interrupted")
	var buf bytes.Buffer
	o := &Output{Ctx: ctx, W: &buf, Refused: refused}
	o.Write([]byte("before "))
	cancel()
	if n, err := o.Write([]byte("after")); n != 0 || err != refused {
		t.Errorf("write after cancel = %d, %v; want 0, %v", n, err, refused)
	}
	if buf.String() != "before " || o.Err() != nil {
		t.Errorf("written %q, Err %v; want only what came before, and no write error", buf.String(), o.Err())
	}
}

// Without a Refused error, a write after cancel fails with the context's
// error: it never looks written.
func TestOutputRefusesWithTheContextsError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var buf bytes.Buffer
	o := &Output{Ctx: ctx, W: &buf}
	cancel()
	if n, err := o.Write([]byte("after")); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("write after cancel = %d, %v; want 0, %v", n, err, context.Canceled)
	}
	if buf.Len() != 0 {
		t.Errorf("written %q after cancel", buf.String())
	}
}

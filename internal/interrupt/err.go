package interrupt

import (
	"context"
	"errors"

	"github.com/lohisoft/lohibot-audit/internal/aside"
)

// ErrInterrupted is the error of a run cancelled (Ctrl-C, SIGTERM) before
// it finished: its results are not printed.
var ErrInterrupted = errors.New("interrupted")

// Cause is ErrInterrupted for an error that ctx's cancellation caused,
// else err.
func Cause(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return ErrInterrupted
	}
	return err
}

// Aside runs f aside and returns its result, or ErrInterrupted as soon as
// ctx is cancelled (f is then left to finish on its own; its result is
// dropped).
func Aside[T any](ctx context.Context, f func() T) (T, error) {
	v, err := aside.Do(ctx, f)
	if err != nil {
		return v, ErrInterrupted
	}
	return v, nil
}

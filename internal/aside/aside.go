// Package aside runs work that cannot be stopped midway so that a
// cancelled run need not wait for it.
package aside

import "context"

// Do runs f in a goroutine of its own and returns its result, or ctx's
// error as soon as ctx is cancelled, before or after f ends (f is then
// left to finish on its own, and its result is dropped).
func Do[T any](ctx context.Context, f func() T) (T, error) {
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	var zero T
	select {
	case v := <-ch:
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		return v, nil
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

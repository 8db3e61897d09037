package watch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"time"

	"github.com/lohisoft/lohibot-audit/crowdsec"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// askTimeout bounds how long Unblock waits for the running watch, which
// undoes each block before it answers.
const askTimeout = 2 * time.Minute

// Unblock takes addrs out of the blocks of the watch whose state
// directory is dir and holds them out of blocking for ttl. The running
// watch does it (watchstate.Ask); when none runs, it is done here with
// what the state says, as of now (StoppedUnblocker, pushing to CrowdSec
// as agent; UnblockStopped), said through say. What each address came out
// of is returned; an error carries its fail kind and a hint.
func Unblock(ctx context.Context, dir string, addrs []netip.Addr, ttl time.Duration, now time.Time, agent crowdsec.Agent, say func(string)) ([]watchstate.Unblocked, error) {
	req := watchstate.Request{Op: watchstate.OpUnblock, TTL: int64(ttl / time.Second)}
	for _, a := range addrs {
		req.Addrs = append(req.Addrs, a.String())
	}
	actx, cancel := context.WithTimeout(ctx, askTimeout)
	resp, err := watchstate.Ask(actx, dir, req)
	cancel()
	switch {
	case err == nil:
		return resp.Unblocked, nil
	case !errors.Is(err, watchstate.ErrNotRunning):
		return nil, err
	}
	u, closeU, err := StoppedUnblocker(dir, now, agent, say)
	var ce *CredentialsError
	switch {
	case errors.As(err, &ce):
		return nil, fail.New(fail.Incomplete, err,
			"the last watch pushed decisions with these credentials: make them readable, or end its decisions with cscli decisions delete")
	case err != nil:
		return nil, fail.New(fail.Incomplete, err, "")
	}
	defer closeU()
	out, err := UnblockStopped(ctx, dir, addrs, ttl, now, u, say)
	switch {
	case err == nil:
		return out, nil
	case errors.Is(err, watchstate.ErrLocked):
		return nil, fail.New(fail.Incomplete, fmt.Errorf("state directory %s: %w, but it does not answer on its socket", parse.EscapeControl(dir), err),
			"try again in a moment; if it stays so, restart that watch")
	case errors.Is(err, fs.ErrPermission):
		return nil, fail.New(fail.Incomplete, fmt.Errorf("state directory %s: %v", parse.EscapeControl(dir), fail.PathCause(err)),
			"run as the user watch runs as (root for the packaged service)")
	}
	return nil, fail.New(fail.Incomplete, err, "")
}

package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Adder puts an address into a block set; *nftset.Adder is one.
type Adder interface {
	Add(ctx context.Context, a netip.Addr) error
}

// Defaults of Exec.
const (
	DefaultExecTimeout     = 10 * time.Second
	DefaultExecConcurrency = 4
	// execQueue is how many commands may wait for a slot; more are
	// dropped, and that is said.
	execQueue = 4096
	// execOutput is how much of a failed command's output its error
	// quotes.
	execOutput = 200
)

// Exec runs a command for each address to block: Argv, then the address,
// the crawler's name and the reason, as separate arguments and without a
// shell. At most Concurrency run at once, each for at most Timeout.
type Exec struct {
	Argv        []string
	Timeout     time.Duration
	Concurrency int
	// OnDone receives each command's outcome (nil error on success), from
	// the Exec's goroutines.
	OnDone func(args []string, err error)

	once    sync.Once
	q       chan []string
	dropped atomic.Int64
	ok      atomic.Int64
	failed  atomic.Int64
}

// ErrExecQueueFull means a command was not run: too many were waiting.
var ErrExecQueueFull = errors.New("too many commands waiting")

func (x *Exec) init() {
	x.once.Do(func() { x.q = make(chan []string, execQueue) })
}

// Queue queues the command for addr; it never waits. The error says only
// that it was dropped.
func (x *Exec) Queue(addr netip.Addr, crawler, reason string) error {
	x.init()
	args := append(append([]string(nil), x.Argv[1:]...), addr.String(), crawler, reason)
	select {
	case x.q <- args:
		return nil
	default:
		x.dropped.Add(1)
		return fmt.Errorf("%w: %s %s not run for %s", ErrExecQueueFull, x.Argv[0], strings.Join(x.Argv[1:], " "), addr)
	}
}

// Run runs queued commands until ctx ends; the commands running then are
// killed.
func (x *Exec) Run(ctx context.Context) {
	x.init()
	n := x.Concurrency
	if n <= 0 {
		n = DefaultExecConcurrency
	}
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				select {
				case args := <-x.q:
					err := x.run(ctx, args)
					if ctx.Err() != nil {
						return
					}
					if err != nil {
						x.failed.Add(1)
					} else {
						x.ok.Add(1)
					}
					if x.OnDone != nil {
						x.OnDone(args, err)
					}
				case <-ctx.Done():
					return
				}
			}
		})
	}
	wg.Wait()
}

func (x *Exec) run(ctx context.Context, args []string) error {
	t := x.Timeout
	if t <= 0 {
		t = DefaultExecTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	cmd := exec.CommandContext(ctx, x.Argv[0], args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if err == nil {
		return nil
	}
	if ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("timed out after %s", t)
	}
	msg := strings.Join(strings.Fields(out.String()), " ")
	if len(msg) > execOutput {
		msg = msg[:execOutput] + "..."
	}
	if msg != "" {
		return fmt.Errorf("%v: %s", err, msg)
	}
	return err
}

// ExecStats counts commands run, failed and dropped.
type ExecStats struct{ OK, Failed, Dropped int64 }

// Stats returns the counts so far.
func (x *Exec) Stats() ExecStats {
	return ExecStats{OK: x.ok.Load(), Failed: x.failed.Load(), Dropped: x.dropped.Load()}
}

package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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
// shell. At most Concurrency run at once, each for at most Timeout. On
// Unix each command runs in a process group of its own, which is ended
// whole when the command ends or times out: nothing it started is left
// running (see runGroup).
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
	out, err := runGroup(ctx, t, x.Argv[0], args)
	if err == nil {
		return nil
	}
	msg := strings.Join(strings.Fields(out), " ")
	if len(msg) > execOutput {
		msg = msg[:execOutput] + "..."
	}
	if msg != "" {
		return fmt.Errorf("%v: %s", err, msg)
	}
	return err
}

// execGrace is how long a command's process group has, once asked to end
// (SIGTERM), before it is killed (SIGKILL).
const execGrace = time.Second

// execKeep is how much of a command's output is kept for its error.
const execKeep = 4 << 10

// errTimedOut is the error of a command ended at its timeout.
type errTimedOut time.Duration

func (e errTimedOut) Error() string { return fmt.Sprintf("timed out after %s", time.Duration(e)) }

// runGroup runs name with args in a process group of its own (on Unix),
// for at most timeout, and returns its output (the first execKeep bytes
// of stdout and stderr together) and its error. At the timeout the group
// is sent SIGTERM, and SIGKILL after execGrace if the command has not
// exited; when ctx ends (watch stops), SIGKILL at once. Once the command
// has exited, however, what is left of its group (children it started and
// did not wait for) is ended too: SIGTERM, then SIGKILL once they have let
// go of the output or after execGrace. A child that makes a group or
// session of its own (setsid) leaves the group and is not ended. Where
// there are no process groups (Windows), the command alone is killed at
// its timeout, and its children are left.
func runGroup(ctx context.Context, timeout time.Duration, name string, args []string) (string, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return "", err
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = pw, pw
	ownGroup(cmd)
	err = cmd.Start()
	pw.Close()
	if err != nil {
		pr.Close()
		return "", err
	}
	// The output is read until every process of the group that holds the
	// pipe has closed it: all of them ended, as a rule.
	var out bytes.Buffer
	outDone := make(chan struct{})
	go func() {
		defer close(outDone)
		defer pr.Close()
		buf := make([]byte, 4096)
		for {
			n, err := pr.Read(buf)
			if k := min(n, execKeep-out.Len()); k > 0 {
				out.Write(buf[:k])
			}
			if err != nil {
				return
			}
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	stopping := false
	select {
	case waitErr = <-exited:
	case <-timer.C:
		endCommand(cmd, exited)
		waitErr = errTimedOut(timeout)
	case <-ctx.Done():
		// watch is stopping: no grace.
		signalGroup(cmd, syscall.SIGKILL)
		waitErr = <-exited
		stopping = true
	}
	// The command has exited; end what is left of its group.
	if !stopping {
		signalGroup(cmd, syscall.SIGTERM)
		select {
		case <-outDone:
		case <-time.After(execGrace):
		}
	}
	signalGroup(cmd, syscall.SIGKILL)
	// A process that left the group and kept the pipe does not hold up
	// the next command.
	select {
	case <-outDone:
	case <-time.After(execGrace):
		pr.Close()
		<-outDone
	}
	return out.String(), waitErr
}

// endCommand asks the command's group to end, and kills it if the
// command has not exited after execGrace; it returns once the command has
// exited.
func endCommand(cmd *exec.Cmd, exited <-chan error) {
	signalGroup(cmd, syscall.SIGTERM)
	select {
	case <-exited:
		return
	case <-time.After(execGrace):
	}
	signalGroup(cmd, syscall.SIGKILL)
	<-exited
}

// ExecStats counts commands run, failed and dropped, and those waiting
// to run.
type ExecStats struct{ OK, Failed, Dropped, Waiting int64 }

// Stats returns the counts so far.
func (x *Exec) Stats() ExecStats {
	x.init()
	return ExecStats{OK: x.ok.Load(), Failed: x.failed.Load(), Dropped: x.dropped.Load(), Waiting: int64(len(x.q))}
}

package watchstate

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/parse"
)

// Errors of Acquire and Ask, matched with errors.Is.
var (
	// ErrLocked means another watch holds the state directory.
	ErrLocked = errors.New("in use by another watch")
	// ErrNotRunning means no watch answers on the directory's socket.
	ErrNotRunning = errors.New("no watch runs with this state directory")
)

var errLockHeld = errors.New("lock held")

// Lock is a state directory held by one watch: another Acquire of it
// fails until Release (or the process ends).
type Lock struct {
	f *os.File
}

// Acquire makes dir (0700) when it does not exist and takes its lock,
// writing the process's ID into it. It fails with an error matching
// ErrLocked, which names the holder's process ID, when another process
// holds it.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, LockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := tryLock(f); err != nil {
		if errors.Is(err, errLockHeld) {
			b, _ := io.ReadAll(io.LimitReader(f, 32))
			f.Close()
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
				return nil, fmt.Errorf("%w (pid %d)", ErrLocked, pid)
			}
			return nil, ErrLocked
		}
		f.Close()
		return nil, err
	}
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &Lock{f: f}, nil
}

// Release lets go of the lock.
func (l *Lock) Release() {
	if l != nil && l.f != nil {
		l.f.Close()
		l.f = nil
	}
}

// Handler answers the requests of the control socket; the Watcher is
// one.
type Handler interface {
	// Status returns the status now.
	Status() Status
	// Unblock takes addrs out of every block and holds them out of
	// blocking for ttl.
	Unblock(ctx context.Context, addrs []netip.Addr, ttl time.Duration) []Unblocked
}

// The operations of a Request.
const (
	OpStatus  = "status"
	OpUnblock = "unblock"
)

// Request is one question to a running watch: one JSON line.
type Request struct {
	Op string `json:"op"`
	// Addrs and TTL are for OpUnblock: the addresses, and how long they
	// are held out of blocking (seconds).
	Addrs []string `json:"addrs,omitempty"`
	TTL   int64    `json:"ttl,omitempty"`
}

// Response is the answer: one JSON line.
type Response struct {
	Status    *Status     `json:"status,omitempty"`
	Unblocked []Unblocked `json:"unblocked,omitempty"`
	// Error says why the request was refused.
	Error string `json:"error,omitempty"`
}

// Limits of the control socket.
const (
	// maxRequest bounds a request line.
	maxRequest = 1 << 20
	// maxSocketPath is the longest socket path every system takes (macOS:
	// 104 bytes with the terminating NUL).
	maxSocketPath = 103
	// serveTimeout bounds one exchange on the server's side.
	serveTimeout = 2 * time.Minute
	// maxConns bounds the exchanges served at once.
	maxConns = 8
	// maxTTL bounds an unblock's hold.
	maxTTL = 365 * 24 * time.Hour
)

// SocketPath is the control socket of the state directory dir.
func SocketPath(dir string) string { return filepath.Join(dir, SocketName) }

// Listen makes the control socket of dir, readable and writable by its
// owner only (0600; the directory is 0700): a socket left by a watch that
// ended is replaced. The caller holds dir's Lock. Close the listener with
// CloseListener, which removes the socket.
func Listen(dir string) (net.Listener, error) {
	path := SocketPath(dir)
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("socket path %s is %d bytes, more than a socket's name may be (%d): give a shorter --state-dir", path, len(path), maxSocketPath)
	}
	// Made under another name and renamed once it is 0600: no moment
	// when others may connect.
	tmp := filepath.Join(dir, "."+SocketName+"."+strconv.Itoa(os.Getpid()))
	os.Remove(tmp)
	ln, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, err
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(false)
	if err := os.Chmod(tmp, 0o600); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, err
	}
	return &listener{UnixListener: ul, path: path}, nil
}

// listener removes its socket when closed.
type listener struct {
	*net.UnixListener
	path string
	once sync.Once
}

func (l *listener) Close() error {
	err := l.UnixListener.Close()
	l.once.Do(func() { os.Remove(l.path) })
	return err
}

// Serve answers requests on ln with h until ctx ends, then closes ln.
func Serve(ctx context.Context, ln net.Listener, h Handler) {
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	defer ln.Close()
	sem := make(chan struct{}, maxConns)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// A transient failure (too many open files): wait a little.
			select {
			case <-time.After(100 * time.Millisecond):
				continue
			case <-ctx.Done():
				return
			}
		}
		select {
		case sem <- struct{}{}:
		default:
			writeResponse(c, Response{Error: "busy: too many requests at once; ask again"})
			c.Close()
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			serveConn(ctx, c, h)
		})
	}
}

// serveConn answers one request.
func serveConn(ctx context.Context, c net.Conn, h Handler) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(serveTimeout))
	if !peerAllowed(c) {
		writeResponse(c, Response{Error: "refused: only root and the user the watch runs as may ask it"})
		return
	}
	br := bufio.NewReader(io.LimitReader(c, maxRequest+1))
	line, err := br.ReadBytes('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		if len(line) > maxRequest {
			writeResponse(c, Response{Error: "request too long"})
		}
		return
	}
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		writeResponse(c, Response{Error: "not a request: " + err.Error()})
		return
	}
	switch req.Op {
	case OpStatus:
		s := h.Status()
		s.Running = true
		writeResponse(c, Response{Status: &s})
	case OpUnblock:
		addrs, err := ParseAddrs(req.Addrs)
		if err != nil {
			writeResponse(c, Response{Error: err.Error()})
			return
		}
		// Bounded in seconds first: a huge count of seconds would wrap
		// round as a Duration.
		ttl := time.Duration(req.TTL) * time.Second
		if req.TTL <= 0 || req.TTL > int64(maxTTL/time.Second) {
			writeResponse(c, Response{Error: fmt.Sprintf("ttl %d s: give 1 s to 365 days", req.TTL)})
			return
		}
		writeResponse(c, Response{Unblocked: h.Unblock(ctx, addrs, ttl)})
	default:
		writeResponse(c, Response{Error: fmt.Sprintf("unknown request %q", clip(req.Op))})
	}
}

func writeResponse(c net.Conn, r Response) {
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(Response{Error: err.Error()})
	}
	c.Write(append(b, '\n'))
}

// AddrArgs are the addresses of unblock's arguments (ParseAddrs): none,
// or one that is not an address, is a usage error.
func AddrArgs(args []string) ([]netip.Addr, error) {
	if len(args) == 0 {
		return nil, fail.Usagef("give the addresses to unblock, such as 'lohibot-audit unblock 203.0.113.7'")
	}
	addrs, err := ParseAddrs(args)
	if err != nil {
		return nil, fail.Usagef("%s", parse.EscapeControl(err.Error()))
	}
	return addrs, nil
}

// ParseAddrs reads addresses as `unblock` takes them: each one net/netip
// reads, IPv4-mapped ones unmapped, without a zone, not unspecified; the
// error names the first that is not.
func ParseAddrs(args []string) ([]netip.Addr, error) {
	out := make([]netip.Addr, 0, len(args))
	for _, s := range args {
		a, problem := checkAddr(s)
		if problem != "" {
			if _, err := netip.ParsePrefix(s); err == nil {
				return nil, fmt.Errorf("%q is a range: give single addresses", clip(s))
			}
			return nil, fmt.Errorf("%s: give IP addresses such as 192.0.2.7 or 2001:db8::7", problem)
		}
		out = append(out, a)
	}
	return out, nil
}

// Ask sends req to the watch running with the state directory dir and
// returns its answer. It fails with an error matching ErrNotRunning when
// no watch listens there (no socket, or one nobody listens on); a request
// the watch refuses is a usage error (fail.Usage); a socket that is not
// the caller's to use, or a watch that does not answer, is fail.Incomplete.
func Ask(ctx context.Context, dir string, req Request) (*Response, error) {
	resp, err := ask(ctx, dir, req)
	switch {
	case err == nil, errors.Is(err, ErrNotRunning):
		return resp, err
	case errors.Is(err, fs.ErrPermission):
		return nil, fail.New(fail.Incomplete, fmt.Errorf("cannot ask the running watch: %w", err),
			"run as the user watch runs as (root for the packaged service): its state directory is its own")
	case resp != nil:
		// The watch answered with an error: the request was refused.
		return nil, fail.Usagef("the running watch refuses: %v", err)
	}
	// The socket's path is the operator's, in the message and in the
	// network error's: escaped whole, the error stays one line.
	return nil, fail.New(fail.Incomplete, &escapedError{fmt.Errorf("cannot ask the running watch through %s: %w", SocketPath(dir), err)}, "")
}

// escapedError is an error whose message is escaped (parse.EscapeControl).
type escapedError struct{ err error }

func (e *escapedError) Error() string { return parse.EscapeControl(e.err.Error()) }
func (e *escapedError) Unwrap() error { return e.err }

// statusTimeout bounds how long StatusOf waits for the running watch.
const statusTimeout = 30 * time.Second

// StatusOf is the status of the watch of the state directory dir and
// when it was taken: asked of the running watch (Ask, waiting at most
// statusTimeout), or, when none runs, what the last one wrote into its
// state when it stopped (Stopped at now). No watch running and no state, or a state that cannot be
// read, is fail.Incomplete.
func StatusOf(ctx context.Context, dir string, now time.Time) (Status, time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	resp, err := Ask(ctx, dir, Request{Op: OpStatus})
	cancel()
	switch {
	case err == nil && resp.Status == nil:
		return Status{}, time.Time{}, fail.New(fail.Incomplete, fmt.Errorf("the watch on %s answered without its status", parse.EscapeControl(SocketPath(dir))), "")
	case err == nil:
		return *resp.Status, resp.Status.At, nil
	case !errors.Is(err, ErrNotRunning):
		return Status{}, time.Time{}, err
	}
	l, err := Read(dir, now)
	shown := parse.EscapeControl(dir) // a message is one line
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Status{}, time.Time{}, fail.New(fail.Incomplete, fmt.Errorf("no watch runs with state directory %s, and none left a state there", shown),
			"start one (systemctl start lohibot-audit-watch), or give the --state-dir it uses")
	case err != nil:
		return Status{}, time.Time{}, fail.New(fail.Incomplete, fmt.Errorf("no watch runs with state directory %s, and its state cannot be read: %v", shown, fail.PathCause(err)), "")
	}
	return l.Stopped(now), l.Written, nil
}

// ask is Ask with the errors as they come.
func ask(ctx context.Context, dir string, req Request) (*Response, error) {
	path := SocketPath(dir)
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, ErrNotRunning
		}
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("%s: %w", parse.EscapeControl(path), fs.ErrPermission)
		}
		return nil, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) })
	defer stop()
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write(append(b, '\n')); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(io.LimitReader(c, 64<<20)).ReadBytes('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("no answer from the watch: %w", err)
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		return nil, fmt.Errorf("an answer that does not parse: %w", err)
	}
	if resp.Error != "" {
		return &resp, errors.New(resp.Error)
	}
	return &resp, nil
}

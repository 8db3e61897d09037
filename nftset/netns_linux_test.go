package nftset

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// The kernel tests work in a network namespace of their own, made with
// unshare(2) on a thread that never returns to the pool, and check what
// they did with the real nft run inside it through nsenter. They need root
// (CAP_NET_ADMIN and CAP_SYS_ADMIN), nft and nsenter: without them a test
// fails when the environment variable CI is set and skips otherwise.

// netNS is a throwaway network namespace.
type netNS struct {
	t       testing.TB
	f       *os.File // holds the namespace open
	nft     string
	nsenter string
}

// newNetNS makes a network namespace that lives until the test ends.
func newNetNS(t testing.TB) *netNS {
	t.Helper()
	if os.Geteuid() != 0 {
		testutil.Missing(t, "the nftables tests need root to make a network namespace")
	}
	ns := &netNS{t: t, nft: testutil.NeedTool(t, ".ci/install-rule-checkers", "nft"), nsenter: testutil.NeedTool(t, ".ci/install-rule-checkers", "nsenter")}
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result)
	go func() {
		// The thread stays locked: it ends with this goroutine instead of
		// going back to the pool in the new namespace.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- result{err: fmt.Errorf("unshare: %w", err)}
			return
		}
		f, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		ch <- result{f, err}
	}()
	r := <-ch
	if r.err != nil {
		testutil.Missing(t, "cannot make a network namespace: %v", r.err)
	}
	ns.f = r.f
	t.Cleanup(func() { ns.f.Close() })
	return ns
}

// fd is the namespace's descriptor, for Options.NetNS.
func (ns *netNS) fd() int { return int(ns.f.Fd()) }

// run runs a command inside the namespace and returns its standard output.
func (ns *netNS) run(stdin []byte, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(ns.nsenter, append([]string{"--net=/proc/self/fd/3", name}, args...)...)
	cmd.ExtraFiles = []*os.File{ns.f}
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.Bytes(), nil
}

// nftRun runs nft with args in the namespace and fails the test on error.
func (ns *netNS) nftRun(args ...string) []byte {
	ns.t.Helper()
	out, err := ns.run(nil, ns.nft, args...)
	if err != nil {
		ns.t.Fatal(err)
	}
	return out
}

// load runs nft -f - with the given file in the namespace.
func (ns *netNS) load(file []byte) error {
	_, err := ns.run(file, ns.nft, "-f", "-")
	return err
}

// jsonElem is one element of nft -j list set.
type jsonElem struct {
	Val     string
	Prefix  string
	Range   [2]string
	Timeout int64 // seconds; 0 when it is the set's default
	Expires int64 // seconds
}

// jsonSet is what nft -j list set says of a set.
type jsonSet struct {
	Family, Name, Table, Type string
	Flags                     []string
	Timeout                   int64
	Elems                     []jsonElem
}

// listSet returns the set as nft -j list set shows it.
func (ns *netNS) listSet(table, name string) (jsonSet, error) {
	out, err := ns.run(nil, ns.nft, append([]string{"-j", "list", "set"}, append(strings.Fields(table), name)...)...)
	if err != nil {
		return jsonSet{}, err
	}
	var doc struct {
		Nftables []map[string]json.RawMessage `json:"nftables"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return jsonSet{}, fmt.Errorf("nft -j: %v: %s", err, out)
	}
	for _, o := range doc.Nftables {
		raw, ok := o["set"]
		if !ok {
			continue
		}
		var s struct {
			Family, Name, Table, Type string
			Flags                     []string
			Timeout                   int64
			Elem                      []json.RawMessage
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return jsonSet{}, fmt.Errorf("nft -j set: %v: %s", err, raw)
		}
		js := jsonSet{Family: s.Family, Name: s.Name, Table: s.Table, Type: s.Type, Flags: s.Flags, Timeout: s.Timeout}
		for _, e := range s.Elem {
			el, err := parseElem(e)
			if err != nil {
				return jsonSet{}, err
			}
			js.Elems = append(js.Elems, el)
		}
		return js, nil
	}
	return jsonSet{}, fmt.Errorf("nft -j list set %s %s: no set in %s", table, name, out)
}

// parseElem reads one element of nft's JSON: a bare value, a prefix, a
// range, or {"elem": {"val": …, "timeout": …, "expires": …}}.
func parseElem(raw json.RawMessage) (jsonElem, error) {
	var el jsonElem
	var wrapped struct {
		Elem *struct {
			Val     json.RawMessage
			Timeout int64
			Expires int64
		}
	}
	val := raw
	if err := json.Unmarshal(raw, &wrapped); err == nil && wrapped.Elem != nil {
		val, el.Timeout, el.Expires = wrapped.Elem.Val, wrapped.Elem.Timeout, wrapped.Elem.Expires
	}
	var s string
	if json.Unmarshal(val, &s) == nil {
		el.Val = s
		return el, nil
	}
	var v struct {
		Prefix *struct {
			Addr string
			Len  int
		}
		Range []string
	}
	if err := json.Unmarshal(val, &v); err != nil {
		return el, fmt.Errorf("nft -j element %s: %v", raw, err)
	}
	switch {
	case v.Prefix != nil:
		el.Prefix = fmt.Sprintf("%s/%d", v.Prefix.Addr, v.Prefix.Len)
	case len(v.Range) == 2:
		el.Range = [2]string{v.Range[0], v.Range[1]}
	default:
		return el, fmt.Errorf("nft -j element %s: unknown shape", raw)
	}
	return el, nil
}

// vals returns the single-address elements of a set, and the others as
// "prefix" or "a-b".
func (s jsonSet) vals() []string {
	var out []string
	for _, e := range s.Elems {
		switch {
		case e.Val != "":
			out = append(out, e.Val)
		case e.Prefix != "":
			out = append(out, e.Prefix)
		default:
			out = append(out, e.Range[0]+"-"+e.Range[1])
		}
	}
	return out
}

// elem returns the element whose value is v.
func (s jsonSet) elem(v string) (jsonElem, bool) {
	for _, e := range s.Elems {
		if e.Val == v {
			return e, true
		}
	}
	return jsonElem{}, false
}

// inside runs f on a thread that has entered the namespace; sockets f
// opens belong to the namespace and may be used from any goroutine.
func (ns *netNS) inside(f func() error) error {
	ch := make(chan error)
	go func() {
		// Never unlocked: the thread ends with the goroutine.
		runtime.LockOSThread()
		if err := unix.Setns(ns.fd(), unix.CLONE_NEWNET); err != nil {
			ch <- fmt.Errorf("setns: %w", err)
			return
		}
		ch <- f()
	}()
	return <-ch
}

package watch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/lohisoft/lohibot-audit/crowdsec"
	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/nftset"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// CredentialsError is StoppedUnblocker's error for CrowdSec credentials
// of the last watch that cannot be read.
type CredentialsError struct{ Err error }

func (e *CredentialsError) Error() string { return "crowdsec: " + e.Err.Error() }
func (e *CredentialsError) Unwrap() error { return e.Err }

// StoppedUnblocker undoes blocks where the state of dir (read as of now)
// says the last watch made them: its nftables table (in the network
// namespace it named), its CrowdSec Local API (pushing as agent). With no
// state to say (none there, one that cannot be read, or one only unblock
// wrote), it takes the addresses out of the default table's sets in this
// network namespace, where watch --nftables and emit nftables put them,
// and says so. The function returned lets go of what it opened.
func StoppedUnblocker(dir string, now time.Time, agent crowdsec.Agent, say func(string)) (Unblocker, func(), error) {
	var u Unblocker
	closer := func() {}
	l, err := watchstate.Read(dir, now)
	if err != nil || l.Status == nil {
		// Nothing known of where blocks went: the hold is written all the
		// same (UnblockStopped says what it does with a bad state).
		msg := fmt.Sprintf("no state in %s tells where a watch blocked", dir)
		if runtime.GOOS == "linux" {
			u.Sets = nftset.Sets{Options: nftset.Options{NFTOptions: emit.NFTOptions{Table: emit.DefaultNFTTable, SetOnly: true}}}
			msg += fmt.Sprintf(": taking the addresses out of the sets of nftables table %s here, if it holds them", emit.DefaultNFTTable)
		}
		say(msg + "; CrowdSec decisions are not known: end them with 'cscli decisions delete --ip ADDRESS'")
		return u, closer, nil
	}
	t := l.Targets
	if t.NFTables != "" {
		so := nftset.Options{NFTOptions: emit.NFTOptions{Table: t.NFTables, SetOnly: true}}
		if t.NFTNetNS != "" {
			f, err := os.Open(t.NFTNetNS)
			if err != nil {
				return u, closer, fmt.Errorf("nftables: the network namespace of the last watch: %v", fail.PathCause(err))
			}
			closer = func() { f.Close() }
			so.NetNS = int(f.Fd())
		}
		u.Sets = nftset.Sets{Options: so}
	}
	if t.CrowdSecCredentials != "" {
		creds, err := crowdsec.ReadCredentials(t.CrowdSecCredentials)
		if err != nil {
			closer()
			return u, func() {}, &CredentialsError{Err: fail.PathCause(err)}
		}
		u.CrowdSec = agent.Pusher(creds, nil, time.Hour)
	}
	return u, closer, nil
}

// WriteUnblocked writes an unblock event for each of out to w (lines for
// people when terminal), as of now. An event that could not be written
// is an output not written; else an address with errors (something could
// not be undone) makes the run incomplete (internal/fail).
func WriteUnblocked(w io.Writer, terminal bool, out []watchstate.Unblocked, now time.Time) error {
	events := &Events{W: w, Terminal: terminal}
	failed := false
	for _, u := range out {
		events.Unblock(u, now)
		if len(u.Errors) > 0 {
			failed = true
		}
	}
	if _, lost := events.Counts(); lost > 0 {
		return fail.New(fail.Unwritten, errors.New("cannot write to standard output"), "")
	}
	if failed {
		return fail.New(fail.Incomplete, errors.New("not everything could be undone: see each address's errors"), "")
	}
	return nil
}

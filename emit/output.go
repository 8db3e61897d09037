package emit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/lohisoft/lohibot-audit/crowdsec"
	"github.com/lohisoft/lohibot-audit/internal/atomicfile"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/interrupt"
)

// Input is an Input of t, yet to be filled with addresses (AddAudit,
// FromReport): its header made now (to the second) by the program's
// version; the crowdsec target gathers each spoofer's evidence for its
// alerts.
func (t Target) Input(mode Mode, never []netip.Prefix, now time.Time, version string) Input {
	in := Input{Mode: mode, NeverBlock: never, Generated: now.UTC().Truncate(time.Second), Version: version}
	if t.Name == "crowdsec" {
		in.Evidence = map[netip.Addr][]crowdsec.Evidence{}
	}
	return in
}

// Rules are rules written in memory, with the plan they follow.
type Rules struct {
	Plan *Plan
	Text []byte
}

// Rules writes t's rules for in with the options o in memory (Write),
// aside from the caller: should ctx end first, it returns
// interrupt.ErrInterrupted at once and the work is left to finish on its
// own. started, when set, is called as the work starts. An error of the
// rules is worded for the command line (Explain).
func (t Target) Rules(ctx context.Context, in Input, o Options, started func()) (Rules, error) {
	type result struct {
		rules Rules
		err   error
	}
	res, err := interrupt.Aside(ctx, func() result {
		if started != nil {
			started()
		}
		var buf bytes.Buffer
		plan, err := t.Write(&buf, in, o)
		return result{Rules{plan, buf.Bytes()}, err}
	})
	if err != nil {
		return Rules{}, err
	}
	if res.err != nil {
		return Rules{}, Explain(res.err)
	}
	return res.rules, nil
}

// Output is where a run's rules go, as the command line gives it:
// standard output, or File (-o; "" and "-" are standard output), written
// atomically and left as it is when only the time in its header would
// change (WriteFile). ChangedExit (--changed-exit) is the exit code of a
// run that changed File; 0 exits 0 either way.
type Output struct {
	File        string
	ChangedExit int
}

// stdout says whether the rules go to standard output.
func (o Output) stdout() bool { return o.File == "" || o.File == "-" }

// Check refuses, as usage errors, a ChangedExit without a File whose
// change it would tell, and one out of 1-125.
func (o Output) Check() error {
	if o.ChangedExit != 0 && o.stdout() {
		return fail.Usagef("--changed-exit needs -o FILE: it says whether that file changed")
	}
	if o.ChangedExit < 0 || o.ChangedExit > 125 {
		return fail.Usagef("--changed-exit %d: give a code from 1 to 125 (0 to exit 0 either way)", o.ChangedExit)
	}
	return nil
}

// Write writes the rules text to stdout, or to File (WriteFile; should
// the program have to end at once, no temporary file stays), and reports
// whether File changed. Cancelled before File is replaced, it returns
// interrupt.ErrInterrupted and the old file stays; after, the new one is
// whole and the write is done. A write that fails is an output not
// written (internal/fail).
func (o Output) Write(ctx context.Context, stdout io.Writer, text []byte) (changed bool, err error) {
	if o.stdout() {
		if _, err := stdout.Write(text); err != nil {
			return false, fail.New(fail.Unwritten, fmt.Errorf("cannot write the rules: %w", err), "")
		}
		return false, nil
	}
	defer atomicfile.RemoveTempOnForcedExit(o.File)()
	changed, err = WriteFile(ctx, o.File, text)
	return changed, interrupt.Cause(ctx, err)
}

// Said says what writing the rules r of the target named target to File
// did, for people ("lohibot.nft written: nftables block-spoofed rules,
// 3 addresses blocked, ..."); "" for standard output.
func (o Output) Said(changed bool, target string, r Rules) string {
	if o.stdout() {
		return ""
	}
	state := "unchanged"
	if changed {
		state = "written"
	}
	return fmt.Sprintf("%s %s: %s %s rules, %s", o.File, state, target, r.Plan.Mode, r.Plan.Count())
}

// Changed is the error of a run whose rules changed File when
// ChangedExit asks for a code of its own: a finding (internal/fail)
// exiting ChangedExit. nil otherwise.
func (o Output) Changed(changed bool) error {
	if !changed || o.ChangedExit == 0 {
		return nil
	}
	return &fail.Error{Kind: fail.Findings, Code: o.ChangedExit, Err: fmt.Errorf("the rules changed: %s", o.File)}
}

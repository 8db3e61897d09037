package watch

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/parse"
)

// What a watch needs to run, checked before anything is opened: each
// check's error is a usage error (fail.Usage) naming the option at fault
// and saying what to give.

// ExecArgv is an --exec command split at spaces, checked: a command that
// is not there or cannot run is refused now, not at the first spoofer.
func ExecArgv(command string) ([]string, error) {
	argv := strings.Fields(command)
	if len(argv) == 0 {
		return nil, fail.Usagef("--exec %q: give a command, such as --exec /usr/local/bin/lohibot-banip", command)
	}
	if what := commandProblem(argv[0]); what != "" {
		return nil, fail.Usagef("--exec %s: %s: give the path of an executable file", parse.EscapeControl(argv[0]), what)
	}
	return argv, nil
}

// commandProblem says why the command name cannot be run: "not found in
// $PATH", "no such file", "is a directory", "is not executable" or
// "cannot be run"; "" when it can.
func commandProblem(name string) string {
	_, err := exec.LookPath(name)
	if err == nil {
		return ""
	}
	switch fi, serr := os.Stat(name); {
	case errors.Is(err, exec.ErrNotFound) && !strings.ContainsRune(name, os.PathSeparator):
		return "not found in $PATH"
	case serr != nil && errors.Is(serr, fs.ErrNotExist):
		return "no such file"
	case serr == nil && fi.IsDir():
		return "is a directory"
	case serr == nil:
		return "is not executable"
	}
	return "cannot be run"
}

// Asked is which ways of blocking a watch is asked to use.
type Asked struct {
	NFTables, Exec, CrowdSec bool
}

// CheckNeeds refuses an option given on the command line (given says
// which were) that acts only with a way of blocking a is not asked to
// use. Options set by a config file are not held to it: one file may set
// options for several commands.
func (a Asked) CheckNeeds(given func(option string) bool) error {
	for _, n := range []struct {
		option, with string
		on           bool
	}{
		{"nft-table", "--nftables", a.NFTables},
		{"set-only", "--nftables", a.NFTables},
		{"ttl", "--nftables or --crowdsec", a.NFTables || a.CrowdSec},
		{"nft-netns", "--nftables", a.NFTables},
		{"exec-timeout", "--exec", a.Exec},
		{"exec-concurrency", "--exec", a.Exec},
	} {
		if given(n.option) && !n.on {
			return fail.Usagef("--%s acts only with %s: add %s, or leave --%s out", n.option, n.with, n.with, n.option)
		}
	}
	return nil
}

// Check reads the options of the ways of blocking a is asked to use, as
// the command line gives them (given says which options it gave): the
// --ttl value, read whatever blocks (the state keeps how long a block
// lasts) and held to 1s-365d only where it applies, after what it needs
// (CheckNeeds); the --exec command (ExecArgv), when asked; and
// --crowdsec-credentials only with --crowdsec.
func (a Asked) Check(ttl, command string, given func(option string) bool) (time.Duration, []string, error) {
	d, err := emit.ParseTTLFlag(ttl)
	if err != nil {
		return 0, nil, err
	}
	var argv []string
	if a.Exec {
		if argv, err = ExecArgv(command); err != nil {
			return 0, nil, err
		}
	}
	if err := a.CheckNeeds(given); err != nil {
		return 0, nil, err
	}
	if a.NFTables || a.CrowdSec {
		if _, err := emit.TTLFlag(ttl); err != nil {
			return 0, nil, err
		}
	}
	if !a.CrowdSec && given("crowdsec-credentials") {
		return 0, nil, fail.Usagef("--crowdsec-credentials is for --crowdsec")
	}
	return d, argv, nil
}

// CheckLimits refuses an --exec-timeout or --verdict-ttl that is not
// above 0, and an --exec-concurrency below 1.
func CheckLimits(execTimeout time.Duration, execConcurrency int, verdictTTL time.Duration) error {
	if execTimeout <= 0 || execConcurrency < 1 || verdictTTL <= 0 {
		return fail.Usagef("--exec-timeout and --verdict-ttl must be above 0, --exec-concurrency at least 1")
	}
	return nil
}

// CheckFiles refuses a directory given as a log; a file that does not
// exist yet, or cannot be read now, is waited for (SPEC §11). "-" is
// standard input.
func CheckFiles(files []string) error {
	for _, f := range files {
		if f == "-" {
			continue
		}
		if fi, err := os.Stat(f); err == nil && fi.IsDir() {
			return fail.Usagef("%s is a directory: give the log files in it, such as %s",
				parse.EscapeControl(f), parse.EscapeControl(filepath.Join(f, "access.log")))
		}
	}
	return nil
}

// CheckMetrics refuses a --metrics address that is not HOST:PORT; ""
// serves no metrics.
func CheckMetrics(addr string) error {
	if addr == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fail.Usagef("--metrics %q: give HOST:PORT, such as 127.0.0.1:9571", parse.EscapeControl(addr))
	}
	return nil
}

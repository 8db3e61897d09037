package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// logInputs are the logs of a run once its FILE arguments are expanded:
// a name that exists is that file, "-" is stdin, and a pattern (a name
// holding *, ? or [ that does not exist as it is) stands for the files it
// matches, as a shell would expand it. Cron jobs and systemd units, which
// expand nothing, name rotated logs this way: access.log.* matches
// nothing before the first rotation, and that is not an error; a concrete
// name that does not exist stays one (exit 2).
type logInputs struct {
	Files []string
	// fromPattern holds the files a pattern matched: such a file may be
	// rotated away between the match and its reading.
	fromPattern map[string]bool

	mu       sync.Mutex
	warnings []string
}

// hasGlobMeta reports whether name holds a pattern character.
func hasGlobMeta(name string) bool { return strings.ContainsAny(name, "*?[") }

// expandInputs expands args (see logInputs), checking before anything is
// read that every concrete log exists and is not a directory, and that
// every pattern is well formed. Matches of one pattern come in the
// shell's order; a file named twice (by a pattern and by name) is read
// once. When patterns were given and nothing at all is left to read, the
// run is a usage error: the patterns are wrong.
func expandInputs(args []string) (*logInputs, error) {
	in := &logInputs{fromPattern: map[string]bool{}}
	seen := map[string]bool{}
	var empty []string
	for _, name := range args {
		if name == "-" {
			in.Files = append(in.Files, name)
			continue
		}
		fi, err := os.Stat(name)
		if err != nil && errors.Is(err, fs.ErrNotExist) && hasGlobMeta(name) {
			matches, gerr := filepath.Glob(name)
			if gerr != nil {
				return nil, &exitError{code: ExitUsage, err: withHint(fmt.Errorf("%s: bad pattern: %v", name, gerr), "a pattern takes *, ? and [a-z] as a shell does; quote a name that holds them")}
			}
			n := 0
			for _, m := range matches {
				if st, err := os.Stat(m); err == nil && st.IsDir() {
					continue
				}
				if seen[m] {
					continue
				}
				seen[m] = true
				in.fromPattern[m] = true
				in.Files = append(in.Files, m)
				n++
			}
			if n == 0 {
				empty = append(empty, name)
				in.warnings = append(in.warnings, fmt.Sprintf("no log file matches %s: nothing read from it", name))
			}
			continue
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil, &exitError{code: ExitUsage, err: withHint(fmt.Errorf("cannot read %s: %v", name, unwrapPathError(err)), "check the path; FILE is a log file, a compressed log, a pattern such as access.log.*, or - for stdin")}
		case err == nil && fi.IsDir():
			return nil, &exitError{code: ExitUsage, err: withHint(fmt.Errorf("cannot read %s: it is a directory", name), "name the log files in it, such as "+filepath.Join(name, "access.log*"))}
		}
		seen[name] = true
		in.Files = append(in.Files, name)
	}
	if len(in.Files) == 0 && len(empty) > 0 {
		return nil, &exitError{code: ExitUsage, err: withHint(fmt.Errorf("no log file matches %s", strings.Join(empty, " ")), "check the patterns: they are matched as a shell would")}
	}
	return in, nil
}

// warn records a warning for the report.
func (in *logInputs) warn(msg string) {
	in.mu.Lock()
	in.warnings = append(in.warnings, msg)
	in.mu.Unlock()
}

// Warnings are what the expansion and the reading had to say: patterns
// that matched nothing, files rotated away before they were read.
func (in *logInputs) Warnings() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.warnings...)
}

// opener is env.opener, except that a file a pattern matched which is gone
// by the time it is read (rotated away between the match and the read)
// reads as empty, with a warning: it was never the run's to read whole.
func (in *logInputs) opener(env *Env, name string) func(context.Context) (io.ReadCloser, int64, error) {
	open := env.opener(name)
	if !in.fromPattern[name] {
		return open
	}
	return func(ctx context.Context) (io.ReadCloser, int64, error) {
		r, size, err := open(ctx)
		if err != nil && errors.Is(err, fs.ErrNotExist) {
			in.warn(fmt.Sprintf("%s, matched by a pattern, was gone when it was to be read (rotated away?): nothing read from it", name))
			return io.NopCloser(strings.NewReader("")), 0, nil
		}
		return r, size, err
	}
}

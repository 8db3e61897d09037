package emit

import (
	"bytes"
	"context"
	"fmt"
	"regexp"

	"github.com/lohisoft/lohibot-audit/internal/atomicfile"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// generatedRE finds the "generated <time>" marker every output carries.
var generatedRE = regexp.MustCompile(`generated (?:unknown|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2}))`)

// SameIgnoringGenerated reports whether two outputs are the same but for
// their "generated <time>" markers: then the rules did not change and a
// file holding old need not be replaced by cur.
func SameIgnoringGenerated(old, cur []byte) bool {
	if bytes.Equal(old, cur) {
		return true
	}
	strip := func(b []byte) []byte { return generatedRE.ReplaceAllLiteral(b, []byte("generated")) }
	return bytes.Equal(strip(old), strip(cur))
}

// WriteFile writes rules to path atomically, leaving the file there as it
// is when only the time in its header would change (SameIgnoringGenerated),
// and reports whether it changed. Cancelled before the rename, ctx's
// error is returned and the old file stays; any other failure leaves the
// old file too, and is an output not written (internal/fail) that says
// so.
func WriteFile(ctx context.Context, path string, rules []byte) (changed bool, err error) {
	changed, err = atomicfile.Write(ctx, path, rules, 0o644, SameIgnoringGenerated)
	switch {
	case err == nil:
		return changed, nil
	case ctx.Err() != nil:
		return false, ctx.Err()
	}
	return false, fail.New(fail.Unwritten,
		fmt.Errorf("cannot write the rules to %s: %w", path, fail.PathCause(err)),
		"check that the directory exists, is writable and has room; the old file, if any, is as it was")
}

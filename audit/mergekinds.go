package audit

import (
	"context"
	"errors"
	"fmt"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/interrupt"
)

// Merge merges the snapshots (MergeSnapshots), its errors of the kinds
// a run ends with (internal/fail): a snapshot that cannot be merged with
// the others is a usage error ("cannot merge snapshot NAME: WHY"), as is
// an --opted-out value that does not fit the snapshots' crawlers (OptOuts'
// error); any other error that leaves no report is an input that could
// not be read whole. With a report, the error is MergeSnapshots' (an
// *InputError: a snapshot was left out). A cancelled ctx ends it with
// interrupt.ErrInterrupted, and no report.
func (mo MergeOptions) Merge(ctx context.Context) (*Report, error) {
	rep, err := MergeSnapshots(ctx, mo)
	var se *SnapshotError
	switch {
	case ctx.Err() != nil:
		return nil, interrupt.ErrInterrupted
	case rep != nil || err == nil:
		return rep, err
	case errors.As(err, &se):
		return nil, fail.New(fail.Usage, fmt.Errorf("cannot merge snapshot %w", se), "")
	case fail.KindOf(err) == fail.Usage:
		return nil, err
	}
	return nil, fail.New(fail.Incomplete, err, "")
}

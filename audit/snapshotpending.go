package audit

import (
	"context"

	"github.com/lohisoft/lohibot-audit/internal/atomicfile"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// PendingSnapshot is a snapshot being written to a file: it is put in place
// whole (Commit) or not at all (Abort); until then it is a temporary file
// beside its path (atomicfile.RemoveTemp removes it).
type PendingSnapshot struct {
	*SnapshotWriter
	// Path is where the snapshot goes.
	Path string
	file *atomicfile.Pending
}

// CreateSnapshot begins the snapshot file path: a file that cannot be
// made is an error now (atomicfile's, an *fs.PathError), before anything
// is read. Set the writer's fields before the run.
func CreateSnapshot(path string) (*PendingSnapshot, error) {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return nil, err
	}
	return &PendingSnapshot{SnapshotWriter: NewSnapshotWriter(f), Path: path, file: f}, nil
}

// Commit ends the snapshot and puts it in place. The error is the
// writer's, or that of putting it in place (without the path, which the
// caller says), or ctx's when it ended first; no snapshot is left then.
func (p *PendingSnapshot) Commit(ctx context.Context) error {
	if err := p.SnapshotWriter.Close(); err != nil {
		p.file.Abort()
		return err
	}
	if err := p.file.Commit(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fail.PathCause(err)
	}
	return nil
}

// Abort leaves no snapshot.
func (p *PendingSnapshot) Abort() { p.file.Abort() }

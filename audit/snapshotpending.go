package audit

import (
	"context"
	"fmt"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/atomicfile"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// SnapshotTarget is the snapshot a run writes beside its report, as
// `logs --snapshot` gives it (SPEC §14).
type SnapshotTarget struct {
	// Path is where the snapshot goes (--snapshot); "" writes none.
	Path string
	// ServerName names the server whose logs are read (--server-name),
	// else the host's name as Hostname (os.Hostname) tells it.
	ServerName string
	Hostname   func() (string, error)
	// ToolVersion, Now, TrustedProxies and TrustXFF are the
	// SnapshotWriter's.
	ToolVersion    string
	Now            func() time.Time
	TrustedProxies []string
	TrustXFF       bool
}

// Start begins the snapshot, before anything is read; nil without a
// Path. A server name without a path, a path of "-" (standard output
// carries the report) and a host whose name cannot be told are usage
// errors; a file that cannot be made stops the run at once, as output
// that cannot be written (internal/fail). Until Commit or Abort, a forced
// exit leaves no temporary file (atomicfile.RemoveTempOnForcedExit).
func (t SnapshotTarget) Start() (*PendingSnapshot, error) {
	switch {
	case t.Path == "" && t.ServerName != "":
		return nil, fail.Usagef("--server-name names the server in a --snapshot: give --snapshot FILE too")
	case t.Path == "":
		return nil, nil
	case t.Path == "-":
		return nil, fail.Usagef("--snapshot -: give a file name (standard output carries the report)")
	}
	server, err := SnapshotServer(t.ServerName, t.Hostname)
	if err != nil {
		return nil, err
	}
	p, err := CreateSnapshot(t.Path)
	if err != nil {
		return nil, snapshotUnwritten(t.Path, fail.PathCause(err))
	}
	p.Server, p.ToolVersion, p.Now = server, t.ToolVersion, t.Now
	p.TrustedProxies, p.TrustXFF = t.TrustedProxies, t.TrustXFF
	p.undo = atomicfile.RemoveTempOnForcedExit(t.Path)
	return p, nil
}

// PendingSnapshot is a snapshot being written to a file: it is put in place
// whole (Commit) or not at all (Abort); until then it is a temporary file
// beside its path (atomicfile.RemoveTemp removes it). A nil
// PendingSnapshot is a run that writes none: Commit and Abort do nothing.
type PendingSnapshot struct {
	*SnapshotWriter
	// Path is where the snapshot goes.
	Path string
	file *atomicfile.Pending
	undo func() // unregisters the forced-exit cleanup of Start, if any
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

// Commit ends the snapshot and puts it in place. The error is output that
// could not be written (fail.Unwritten: "cannot write the snapshot PATH:
// …"), the writer's or that of putting it in place, or ctx's when it
// ended first; no snapshot is left then.
func (p *PendingSnapshot) Commit(ctx context.Context) error {
	if p == nil {
		return nil
	}
	defer p.unregister()
	if err := p.SnapshotWriter.Close(); err != nil {
		p.file.Abort()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return snapshotUnwritten(p.Path, err)
	}
	if err := p.file.Commit(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return snapshotUnwritten(p.Path, fail.PathCause(err))
	}
	return nil
}

// Abort leaves no snapshot.
func (p *PendingSnapshot) Abort() {
	if p == nil {
		return
	}
	p.file.Abort()
	p.unregister()
}

func (p *PendingSnapshot) unregister() {
	if p.undo != nil {
		p.undo()
	}
}

// snapshotUnwritten is the error of a snapshot to path that could not be written.
func snapshotUnwritten(path string, err error) error {
	return fail.New(fail.Unwritten, fmt.Errorf("cannot write the snapshot %s: %w", path, err), "")
}

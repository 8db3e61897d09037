package cmd

import (
	"context"
	"os"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/internal/atomicfile"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/spf13/pflag"
)

// snapshotOptions are the flags of `logs --snapshot` (SPEC §14).
type snapshotOptions struct {
	// Snapshot is --snapshot FILE: where to write the snapshot.
	Snapshot string
	// ServerName is --server-name: the server the logs are from.
	ServerName string

	// snapshot is the writer of a run that writes one.
	snapshot *audit.SnapshotWriter
}

// addSnapshotFlags adds --snapshot and --server-name (logs).
func addSnapshotFlags(f *pflag.FlagSet, o *snapshotOptions) {
	f.StringVar(&o.Snapshot, "snapshot", "", "also write a snapshot of what was read to `FILE` (claimed hits, verdicts, counts), for 'lohibot-audit merge' to join with other servers' snapshots; written whole or not at all")
	f.StringVar(&o.ServerName, "server-name", "", "the name of the server whose logs these are, kept in the --snapshot: merge tells the servers' files apart by it (default: this host's name)")
}

// pendingSnapshot is a snapshot being written for a run.
type pendingSnapshot struct {
	*audit.PendingSnapshot
	undo func() // unregisters the forced-exit cleanup
}

// startSnapshot begins the snapshot of --snapshot, before anything is
// read: a target that cannot be written stops the run at once (exit 3).
func startSnapshot(env *Env, ao *auditOptions) (*pendingSnapshot, error) {
	o := &ao.snapshotOptions
	if o.Snapshot == "" {
		if o.ServerName != "" {
			return nil, fail.Usagef("--server-name names the server in a --snapshot: give --snapshot FILE too")
		}
		return nil, nil
	}
	if o.Snapshot == "-" {
		return nil, fail.Usagef("--snapshot -: give a file name (standard output carries the report)")
	}
	server, err := audit.SnapshotServer(o.ServerName, os.Hostname)
	if err != nil {
		return nil, err
	}
	p, err := audit.CreateSnapshot(o.Snapshot)
	if err != nil {
		return nil, writeFailed("the snapshot "+o.Snapshot, fail.PathCause(err))
	}
	p.Server, p.ToolVersion, p.Now = server, Version, env.Now
	p.TrustedProxies, p.TrustXFF = ao.TrustedProxies, ao.TrustXFF
	o.snapshot = p.SnapshotWriter
	return &pendingSnapshot{p, atomicfile.RemoveTempOnForcedExit(o.Snapshot)}, nil
}

// commit puts the snapshot in place, once the run made its report.
func (p *pendingSnapshot) commit(ctx context.Context) error {
	if p == nil {
		return nil
	}
	defer p.undo()
	if err := p.Commit(ctx); err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return writeFailed("the snapshot "+p.Path, err)
	}
	return nil
}

// abort leaves no snapshot: the run did not end with a report.
func (p *pendingSnapshot) abort() {
	if p == nil {
		return
	}
	p.Abort()
	p.undo()
}

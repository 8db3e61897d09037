package cmd

import (
	"os"

	"github.com/lohisoft/lohibot-audit/audit"
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

// startSnapshot begins the snapshot of --snapshot, before anything is
// read (audit.SnapshotTarget.Start): nil without --snapshot.
func startSnapshot(env *Env, ao *auditOptions) (*audit.PendingSnapshot, error) {
	o := &ao.snapshotOptions
	p, err := audit.SnapshotTarget{
		Path: o.Snapshot, ServerName: o.ServerName, Hostname: os.Hostname,
		ToolVersion: Version, Now: env.Now, TrustedProxies: ao.TrustedProxies, TrustXFF: ao.TrustXFF,
	}.Start()
	if p != nil {
		o.snapshot = p.SnapshotWriter
	}
	return p, err
}

// Package buildinfo tells the version of the running program from what
// the go command recorded in it, for a build without -ldflags.
package buildinfo

import "runtime/debug"

// Version is the version a build without -ldflags reports, from the
// build information: the main module's version (v1.2.3 for `go install
// github.com/lohisoft/lohibot-audit/cmd/lohibot-audit@v1.2.3`, a
// pseudo-version for a `go build` in a git checkout), else "dev" with the
// commit when the go command recorded one ("dev (2010383c1a2b,
// modified)"), else "dev". ok is debug.ReadBuildInfo's.
func Version(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev string
	var modified bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev == "" {
		return "dev"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified {
		return "dev (" + rev + ", modified)"
	}
	return "dev (" + rev + ")"
}

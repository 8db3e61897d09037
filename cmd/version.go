package cmd

import (
	"runtime/debug"

	"github.com/lohisoft/lohibot-audit/internal/buildinfo"
)

// buildVersion is the version a build without -ldflags reports
// (buildinfo.Version).
func buildVersion(info *debug.BuildInfo, ok bool) string { return buildinfo.Version(info, ok) }

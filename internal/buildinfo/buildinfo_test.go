package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestVersion(t *testing.T) {
	for _, tc := range []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "dev"},
		{"go install of a tag", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, true, "v1.2.3"},
		{"go build in a checkout", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261204164637-2010383c1a2b+dirty"}}, true, "v0.0.0-20261204164637-2010383c1a2b+dirty"},
		{"devel without vcs", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "dev"},
		{"devel with a commit", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "2010383c1a2b3c4d5e6f"}, {Key: "vcs.modified", Value: "false"}}}, true, "dev (2010383c1a2b)"},
		{"devel, modified", &debug.BuildInfo{Main: debug.Module{Version: ""}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "true"}}}, true, "dev (abc, modified)"},
	} {
		if got := Version(tc.info, tc.ok); got != tc.want {
			t.Errorf("%s: Version = %q, want %q", tc.name, got, tc.want)
		}
	}
}

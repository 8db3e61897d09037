package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/spf13/pflag"
)

// readOptions are the flags that say how log text is read, beside
// --log-format: the zone of times logged without an offset, and the most
// memory a decompressor may take.
type readOptions struct {
	TimeZone string
	MaxDict  string
}

func addReadFlags(f *pflag.FlagSet, o *readOptions) {
	f.StringVar(&o.TimeZone, "timezone", "", "IANA `ZONE` (Europe/Berlin, UTC) of logged times without a UTC offset (Apache %{…}t without %z, HAProxy); default the machine's zone")
	f.StringVar(&o.MaxDict, "max-dict", fmt.Sprintf("%dMiB", parse.DefaultMaxDict>>20), "most memory an xz or zstd decompressor may take for its dictionary or window (`SIZE`: 64MiB, 1GiB); a larger archive is refused")
}

// readSettings are the flags of readOptions, checked.
type readSettings struct {
	Location *time.Location
	// ZoneName names Location for the report: the --timezone given, or
	// the machine's zone ("Europe/Berlin, this machine's zone").
	ZoneName string
	MaxDict  int64
}

// settings checks the flags.
func (o *readOptions) settings(getenv func(string) string) (readSettings, error) {
	var s readSettings
	if o.TimeZone == "" {
		s.Location, s.ZoneName = time.Local, localZoneName(getenv)+", this machine's zone"
	} else {
		loc, err := time.LoadLocation(o.TimeZone)
		if err != nil || strings.EqualFold(o.TimeZone, "local") {
			return s, usageError("unknown --timezone %q: give an IANA zone name such as Europe/Berlin, America/New_York or UTC", o.TimeZone)
		}
		s.Location, s.ZoneName = loc, loc.String()
	}
	n, err := parseByteSize(o.MaxDict)
	if err != nil || n < 1<<20 {
		return s, usageError("bad --max-dict %q: give a size of at least 1MiB, such as 128MiB or 1GiB", o.MaxDict)
	}
	s.MaxDict = n
	return s, nil
}

// localZoneName names the machine's zone: $TZ, else the zone
// /etc/localtime links to, else its abbreviation now ("CET").
func localZoneName(getenv func(string) string) string {
	if tz := getenv("TZ"); tz != "" {
		return strings.TrimPrefix(tz, ":")
	}
	if dst, err := os.Readlink("/etc/localtime"); err == nil {
		if _, name, ok := strings.Cut(filepath.ToSlash(dst), "zoneinfo/"); ok && name != "" {
			return name
		}
	}
	name, off := time.Now().Zone()
	if name == "" {
		name = fmt.Sprintf("UTC%+d", off/3600)
	}
	return name
}

// parseByteSize reads a size in bytes with an optional binary unit: 512,
// 64KiB, 128MiB, 1GiB (K, M, G and KB, MB, GB mean the same).
func parseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') {
		i--
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	var shift uint
	switch strings.TrimSuffix(strings.TrimSuffix(unit, "b"), "i") {
	case "":
		if unit == "b" || unit == "" {
			shift = 0
		} else {
			return 0, fmt.Errorf("unknown unit %q", unit)
		}
	case "k":
		shift = 10
	case "m":
		shift = 20
	case "g":
		shift = 30
	default:
		return 0, fmt.Errorf("unknown unit %q", unit)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n << shift, nil
}

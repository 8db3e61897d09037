package parse

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// ReadSettings say how log text is read besides its format: the zone of
// times logged without an offset, and the most memory a decompressor may
// take.
type ReadSettings struct {
	Location *time.Location
	// ZoneName names Location for the report: the zone given, or the
	// machine's zone ("Europe/Berlin, this machine's zone").
	ZoneName string
	MaxDict  int64
}

// ParseReadSettings reads --timezone (an IANA zone; "" for the machine's,
// named from getenv's $TZ or /etc/localtime) and --max-dict (a size of at
// least 1MiB). A bad value is a usage error naming the flag.
func ParseReadSettings(zone, maxDict string, getenv func(string) string) (ReadSettings, error) {
	var s ReadSettings
	if zone == "" {
		s.Location, s.ZoneName = time.Local, localZoneName(getenv)+", this machine's zone"
	} else {
		loc, err := time.LoadLocation(zone)
		if err != nil || strings.EqualFold(zone, "local") {
			return s, fail.Usagef("unknown --timezone %q: give an IANA zone name such as Europe/Berlin, America/New_York or UTC", zone)
		}
		s.Location, s.ZoneName = loc, loc.String()
	}
	n, err := ParseByteSize(maxDict)
	if err != nil || n < 1<<20 {
		return s, fail.Usagef("bad --max-dict %q: give a size of at least 1MiB, such as 128MiB or 1GiB", maxDict)
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

package render

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// WatchStatusFormat is the format of `watch status --format name` written
// to a terminal or not: text or json, "" being text on a terminal, else
// json; another name is a usage error.
func WatchStatusFormat(name string, terminal bool) (string, error) {
	switch name {
	case "":
		if terminal {
			return "text", nil
		}
		return "json", nil
	case "text", "json":
		return name, nil
	}
	return "", fail.Usagef("--format %q: give text or json", parse.EscapeControl(name))
}

// WatchStatusAs writes s in format: "json", one line of the status as
// watchstate.Status encodes it, or "text" (WatchStatus).
func WatchStatusAs(w io.Writer, format string, s watchstate.Status, written, now time.Time) error {
	switch format {
	case "json":
		b, err := json.Marshal(s)
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	case "text":
		return WatchStatus(w, s, written, now)
	}
	return fmt.Errorf("watch status: no format %q", format)
}

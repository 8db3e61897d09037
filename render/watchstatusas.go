package render

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/lohisoft/lohibot-audit/watchstate"
)

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

//go:build !unix

package audit

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }

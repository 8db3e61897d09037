package atomicfile

import "github.com/lohisoft/lohibot-audit/internal/interrupt"

// RemoveTempOnForcedExit registers the removal of path's temporary files
// (RemoveTemp) with interrupt.OnForcedExit, for a write under way: should
// the program have to end at once, no temporary file stays. The returned
// func unregisters it.
func RemoveTempOnForcedExit(path string) (unregister func()) {
	return interrupt.OnForcedExit(func() { RemoveTemp(path) })
}

package progress

// Wanted says whether progress lines are drawn on a stream: only on a
// terminal (tty), unless turned off (off: --no-progress), in CI (CI set)
// or on a dumb terminal (TERM=dumb), as getenv says.
func Wanted(tty, off bool, getenv func(string) string) bool {
	return tty && !off && getenv("CI") == "" && getenv("TERM") != "dumb"
}

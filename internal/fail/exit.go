package fail

// The program's exit codes (SPEC §8), and ExitInterrupted in addition to
// them.
const (
	ExitOK         = 0
	ExitFindings   = 1 // robots check failed, or --fail-on matched
	ExitUsage      = 2 // usage or configuration error
	ExitIncomplete = 3 // an input could not be read whole, or the output could not be written
	// ExitInterrupted is for a run ended by Ctrl-C or SIGTERM (128 + SIGINT,
	// as shells report it): nothing that looks complete was printed.
	ExitInterrupted = 130
)

// Exit is the exit code of a run that ended with err, not nil, and
// whether err is still to be said: Findings is 1, or the Code the user
// chose, and not said (the command said what it found); Incomplete and
// Unwritten are 3; anything else is a usage error (2), as are cobra's
// own errors (an unknown flag, a bad argument count).
func Exit(err error) (code int, say bool) {
	switch KindOf(err) {
	case Findings:
		if code := CodeOf(err); code != 0 {
			return code, false
		}
		return ExitFindings, false
	case Incomplete, Unwritten:
		return ExitIncomplete, true
	}
	return ExitUsage, true
}

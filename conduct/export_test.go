package conduct

// Exported for the tests of package conduct_test.
var (
	FmtTime         = fmtTime
	FmtDur          = fmtDur
	ParseRetryAfter = parseRetryAfter
)

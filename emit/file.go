package emit

import (
	"bytes"
	"regexp"
)

// generatedRE finds the "generated <time>" marker every output carries.
var generatedRE = regexp.MustCompile(`generated (?:unknown|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2}))`)

// SameIgnoringGenerated reports whether two outputs are the same but for
// their "generated <time>" markers: then the rules did not change and a
// file holding old need not be replaced by cur.
func SameIgnoringGenerated(old, cur []byte) bool {
	if bytes.Equal(old, cur) {
		return true
	}
	strip := func(b []byte) []byte { return generatedRE.ReplaceAllLiteral(b, []byte("generated")) }
	return bytes.Equal(strip(old), strip(cur))
}

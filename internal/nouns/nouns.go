// Package nouns puts a count and its noun in agreement for messages to
// people: "1 file", "2 files", "0 violations".
package nouns

import "strconv"

// Integer is a count's type.
type Integer interface {
	~int | ~int64 | ~uint64
}

// Count returns n in plain digits and the noun it calls for: one when n is
// 1, else many ("0 files", "1 file", "12 files").
func Count[N Integer](n N, one, many string) string {
	var digits string
	if n < 0 {
		digits = strconv.FormatInt(int64(n), 10)
	} else {
		digits = strconv.FormatUint(uint64(n), 10)
	}
	return digits + " " + Of(n, one, many)
}

// Of returns one when n is 1, else many.
func Of[N Integer](n N, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

//go:build race

package conduct

// raceOn says the race detector is on: the random tests try fewer cases.
const raceOn = true

//go:build !race

package cuda

// raceEnabled: built with -race (race_test.go).
const raceEnabled = false

//go:build race

package cuda

// raceEnabled: built with -race, whose runtime allocates on its own, so
// allocation counts (testing.AllocsPerRun) mean nothing there.
const raceEnabled = true

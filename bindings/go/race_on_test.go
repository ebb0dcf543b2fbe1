//go:build race

package runlet

// The race detector slows every cycle down; the leak test runs fewer of them under it.
const raceEnabled = true

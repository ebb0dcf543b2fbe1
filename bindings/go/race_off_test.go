//go:build !race

package runlet

const raceEnabled = false

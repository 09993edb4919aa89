//go:build unix && !race

package e2e

const raceEnabled = false

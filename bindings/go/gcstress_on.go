//go:build runlet_gcstress

// With the runlet_gcstress tag every access to a C handle first forces a garbage collection, so
// a handle the binding let go of too early fails the tests at once (run with GOGC=1).

package runlet

const gcStress = true

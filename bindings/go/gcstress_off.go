//go:build !runlet_gcstress

// Without the runlet_gcstress tag handle access costs nothing extra (see gcstress_on.go).

package runlet

const gcStress = false

//go:build !runlet_dev && !runlet_static

// Linking by default: the installed librunlet.so, found through pkg-config (runlet.pc).

package runlet

// #cgo pkg-config: runlet
import "C"

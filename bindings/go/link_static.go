//go:build !runlet_dev && runlet_static

// Linking with the runlet_static tag: the installed librunlet.a and its native dependencies
// (pkg-config --static gives Libs.private), so the binary does not load librunlet.so.

package runlet

// #cgo pkg-config: --static runlet
// #cgo LDFLAGS: -Wl,-Bstatic -lrunlet -Wl,-Bdynamic
import "C"

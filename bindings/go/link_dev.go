//go:build runlet_dev

// Linking with the runlet_dev tag: this repository's include/ and the librunlet.a cargo built in
// target/release (cargo build --release -p runlet-capi --features mcp,postgres,web,otlp), without installing anything (the shared
// library there lacks the file its SONAME names). scripts/test-go builds this way.

package runlet

// #cgo CFLAGS: -I${SRCDIR}/../../include
// #cgo LDFLAGS: -L${SRCDIR}/../../target/release -Wl,-Bstatic -lrunlet -Wl,-Bdynamic -lgcc_s -lutil -lrt -lpthread -lm -ldl
import "C"

// Crossing the C boundary with data: views of Go strings and bytes for the length of one C call
// (Runlet copies what it keeps), copies of what C returns, and C-owned copies for structs Runlet
// reads from C memory.

package runlet

// #include <stdlib.h>
// #include "runlet.h"
import "C"

import "unsafe"

// view is a runlet_str of s, valid while s is alive: for arguments of one C call.
func view(s string) C.runlet_str {
	return C.runlet_str{ptr: (*C.char)(unsafe.Pointer(unsafe.StringData(s))), len: C.size_t(len(s))}
}

// bytesView is a runlet_bytes of b, valid while b is alive: for arguments of one C call.
func bytesView(b []byte) C.runlet_bytes {
	return C.runlet_bytes{ptr: (*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(b))), len: C.size_t(len(b))}
}

// goString copies a string Runlet lends.
func goString(v C.runlet_str) string {
	if v.len == 0 {
		return ""
	}
	return C.GoStringN(v.ptr, C.int(v.len))
}

// goBytes copies bytes Runlet lends.
func goBytes(v C.runlet_bytes) []byte {
	if v.len == 0 {
		return []byte{}
	}
	return C.GoBytes(unsafe.Pointer(v.ptr), C.int(v.len))
}

// takeBuf copies a buffer Runlet handed over, then frees it.
func takeBuf(buf C.runlet_buf) []byte {
	defer C.runlet_buf_free(buf)
	if buf.len == 0 {
		return []byte{}
	}
	return C.GoBytes(unsafe.Pointer(buf.ptr), C.int(buf.len))
}

// cCopy is a C-owned copy of s as a view, for structs in C memory; release it with cFree.
func cCopy(s string) C.runlet_str {
	if s == "" {
		return C.runlet_str{}
	}
	return C.runlet_str{ptr: (*C.char)(C.CBytes([]byte(s))), len: C.size_t(len(s))}
}

// cCopyBytes is a C-owned copy of b as a view; release it with cFree.
func cCopyBytes(b []byte) C.runlet_bytes {
	if len(b) == 0 {
		return C.runlet_bytes{}
	}
	return C.runlet_bytes{ptr: (*C.uint8_t)(C.CBytes(b)), len: C.size_t(len(b))}
}

// cFree releases C memory from cCopy, cCopyBytes or C.calloc; nil is a no-op.
func cFree(p unsafe.Pointer) {
	C.free(p)
}

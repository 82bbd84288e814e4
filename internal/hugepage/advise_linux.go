package hugepage

import (
	"syscall"
	"unsafe"
)

// advise asks for huge pages over n bytes at p, both aligned to pageSize.
// An error (a kernel without transparent huge pages) changes nothing.
func advise(p unsafe.Pointer, n uintptr) {
	_ = syscall.Madvise(unsafe.Slice((*byte)(p), n), syscall.MADV_HUGEPAGE)
}

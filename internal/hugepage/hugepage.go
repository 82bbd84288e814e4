// Package hugepage allocates large arrays that the kernel may back with
// transparent huge pages.
//
// grmdp's tables are arrays of hundreds of megabytes, written once in an
// order far from sequential (rows scattered from file order to step order).
// Backed by 4 KiB pages, every first write to a page is a page fault and
// every random access a likely TLB miss; with 2 MiB pages both are 512 times
// rarer. On a virtual machine where a fault is expensive this is most of a
// read's time (docs/PERFORMANCE.md item 15).
//
// Linux's default policy ("madvise" in
// /sys/kernel/mm/transparent_hugepage/enabled) gives huge pages only to
// memory that asks for them, and the Go runtime does not ask for its heap.
// Make asks for the arrays it returns. The memory stays ordinary Go heap
// memory, collected as usual; the advice changes no value and is ignored
// where it is not supported.
package hugepage

import "unsafe"

// MinBytes is the smallest array Make advises: below it an array spans too
// few huge pages to matter.
const MinBytes = 8 << 20

// pageSize is the size of a huge page (x86-64 and arm64 with 4 KiB base
// pages).
const pageSize = 2 << 20

// Make returns make([]T, n), with the kernel advised to back the whole huge
// pages inside it with huge pages when the array holds at least MinBytes. T
// must hold no pointers (the advice does not care, but the arrays it is for
// do not).
func Make[T any](n int) []T {
	return MakeCap[T](n, n)
}

// MakeCap is Make for make([]T, n, c).
func MakeCap[T any](n, c int) []T {
	s := make([]T, n, c)
	var zero T
	size := uintptr(c) * unsafe.Sizeof(zero)
	if c == 0 || size < MinBytes {
		return s
	}
	base := unsafe.Pointer(unsafe.SliceData(s))
	p := uintptr(base)
	lo := (p + pageSize - 1) &^ (pageSize - 1)
	hi := (p + size) &^ (pageSize - 1)
	if hi > lo {
		advise(unsafe.Add(base, lo-p), hi-lo)
	}
	return s
}

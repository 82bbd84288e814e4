//go:build unix

package parquetio_test

import "syscall"

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

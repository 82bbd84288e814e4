//go:build !unix

package parquetio_test

import "errors"

func mkfifo(string) error { return errors.New("unsupported") }

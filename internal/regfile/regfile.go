// Package regfile opens files that must be regular files: model readers
// refuse directories, FIFOs and devices before opening them (opening a FIFO
// blocks until a writer appears; a device can be endless).
package regfile

import (
	"fmt"
	"os"
)

// Open opens path for reading if it is a regular file, checked before
// opening and again on the open file (so that it was not swapped for
// something else in between). It returns the file and its FileInfo.
func Open(path string) (*os.File, os.FileInfo, error) {
	before, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !before.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s: not a regular file (%v)", path, before.Mode().Type())
	}
	fd, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := fd.Stat()
	if err == nil && (!fi.Mode().IsRegular() || !os.SameFile(before, fi)) {
		err = fmt.Errorf("%s: changed while being opened", path)
	}
	if err != nil {
		fd.Close()
		return nil, nil, err
	}
	return fd, fi, nil
}

// ReadFile reads the regular file at path whole, refusing files larger
// than limit bytes (before reading them).
func ReadFile(path string, limit int64) ([]byte, error) {
	fd, fi, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d this reader accepts", path, fi.Size(), limit)
	}
	data := make([]byte, fi.Size())
	if n, err := fd.ReadAt(data, 0); n != len(data) {
		return nil, fmt.Errorf("%s: read %d of %d bytes: %w", path, n, len(data), err)
	}
	return data, nil
}

// Package inputs opens the files haeols reads: regular files only, so that a
// directory, a named pipe (which would block the open or the read forever), a
// device or a socket given as an input is a clear error instead of a hang or
// an endless read.
package inputs

import (
	"fmt"
	"io/fs"
	"os"
)

// Open opens path for reading if it is a regular file (a symbolic link to
// one is followed) and returns it with its size. The type is checked before
// the open, so that opening a named pipe cannot block, and again on the
// opened file, so that a file swapped in between is caught too. The error
// does not repeat path; callers name the file.
func Open(path string) (*os.File, int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, unwrapPath(err)
	}
	if err := Regular(fi); err != nil {
		return nil, 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, unwrapPath(err)
	}
	fi2, err := f.Stat()
	if err == nil {
		err = Regular(fi2)
	}
	if err == nil && !os.SameFile(fi, fi2) {
		err = fmt.Errorf("changed while being opened")
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, fi2.Size(), nil
}

// Regular returns nil if fi describes a regular file, else an error saying
// what it is instead, e.g. "not a regular file: a named pipe (FIFO)".
func Regular(fi fs.FileInfo) error {
	if fi.Mode().IsRegular() {
		return nil
	}
	return fmt.Errorf("not a regular file: %s", Kind(fi.Mode()))
}

// Kind names the type of a file mode for messages: "a directory", "a named
// pipe (FIFO)", "a character device", ...
func Kind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t == 0:
		return "a regular file"
	case t&fs.ModeDir != 0:
		return "a directory"
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeIrregular != 0:
		return "an irregular file"
	default:
		return fmt.Sprintf("a file of type %v", t)
	}
}

// unwrapPath drops the *fs.PathError's operation and path, which the
// callers' errors already name, keeping its cause.
func unwrapPath(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}

// ReadFile reads the regular file at path whole (Open), refusing one larger
// than limit bytes before reading it. The error does not repeat path.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, size, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > limit {
		return nil, fmt.Errorf("%d bytes, more than the %d this reader accepts", size, limit)
	}
	data := make([]byte, size)
	if n, err := f.ReadAt(data, 0); n != len(data) {
		return nil, fmt.Errorf("read %d of %d bytes: %w", n, len(data), err)
	}
	return data, nil
}

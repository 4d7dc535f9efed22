//go:build unix

package inputs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	os.WriteFile(file, []byte("hello"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(file, link)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, c := range []struct {
		path string
		size int64
		err  string
	}{
		{file, 5, ""},
		{link, 5, ""},
		{dir, 0, "not a regular file: a directory"},
		{fifo, 0, "not a regular file: a named pipe (FIFO)"},
		{"/dev/null", 0, "not a regular file: a character device"},
		{filepath.Join(dir, "missing"), 0, "no such file or directory"},
	} {
		f, size, err := Open(c.path)
		if c.err == "" {
			if err != nil || size != c.size {
				t.Errorf("Open(%s) = %d, %v", c.path, size, err)
			} else {
				f.Close()
			}
			continue
		}
		if err == nil || err.Error() != c.err {
			t.Errorf("Open(%s) error %v, want %q", c.path, err, c.err)
		}
	}
}

//go:build unix

package regfile

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFIFO: a FIFO is refused without blocking (opening it would wait for
// a writer).
func TestFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if _, _, err := Open(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Open(fifo) = %v", err)
	}
	if _, err := ReadFile(fifo, 1<<20); err == nil {
		t.Error("ReadFile(fifo) = nil")
	}
}

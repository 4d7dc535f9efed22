package regfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(p, 5); err != nil || string(b) != "hello" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if _, err := ReadFile(p, 4); err == nil || !strings.Contains(err.Error(), "more than the 4") {
		t.Errorf("ReadFile over the limit: %v", err)
	}
	if _, _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("Open(dir) = %v", err)
	}
	if _, _, err := Open(filepath.Join(dir, "none")); err == nil {
		t.Error("Open(missing) = nil")
	}
}

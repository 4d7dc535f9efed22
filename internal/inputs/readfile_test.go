package inputs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(p, 5); err != nil || string(b) != "hello" {
		t.Errorf("ReadFile = %q, %v", b, err)
	}
	if _, err := ReadFile(p, 4); err == nil || !strings.Contains(err.Error(), "5 bytes, more than the 4") {
		t.Errorf("ReadFile over the limit: %v", err)
	}
	if _, err := ReadFile(dir, 10); err == nil || !strings.Contains(err.Error(), "not a regular file: a directory") {
		t.Errorf("ReadFile(dir) = %v", err)
	}
}

//go:build unix

package llama

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestLoadNotRegular checks that Load and LoadTokenizer refuse a directory,
// a named pipe and a device by their type, without opening them (a FIFO
// would block the open).
func TestLoadNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "model.bin")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cases := []struct{ path, kind string }{
		{dir, "a directory"},
		{fifo, "a named pipe (FIFO)"},
		{"/dev/zero", "a character device"},
	}
	for _, c := range cases {
		if _, err := os.Stat(c.path); err != nil {
			continue
		}
		want := "llama: " + c.path + ": not a regular file: " + c.kind
		if _, err := Load(c.path); err == nil || err.Error() != want {
			t.Errorf("Load(%s) = %v, want %q", c.path, err, want)
		}
		if _, err := LoadTokenizer(c.path); err == nil || err.Error() != want {
			t.Errorf("LoadTokenizer(%s) = %v, want %q", c.path, err, want)
		}
	}
}

// TestLoadLyingHeaderBoundedMemory checks that a huge sparse file whose
// header does not match its size is refused with the exact message after
// allocating less than 1 MiB.
func TestLoadLyingHeaderBoundedMemory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.bin")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	var hdr []byte
	for _, v := range []int32{288, 768, 6, 6, 6, 32000, 256} { // stories15M
		hdr = binary.LittleEndian.AppendUint32(hdr, uint32(v))
	}
	f.Write(hdr)
	if err := f.Truncate(26 << 30); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = Load(path)
	runtime.ReadMemStats(&after)
	want := "llama: " + path + ": not a llama2.c checkpoint: file is 27917287424 bytes but the header"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %v, want %q...", err, want)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
		t.Errorf("Load allocated %d bytes to reject the file, want < 1 MiB", got)
	}
}

// TestLoadMemoryWithinModel checks that Load allocates about the model's
// weights, not the file's bytes on top of them.
func TestLoadMemoryWithinModel(t *testing.T) {
	m, err := Random(Config{Dim: 64, HiddenDim: 256, Layers: 4, Heads: 4, KVHeads: 4, Vocab: 512, SeqLen: 64, SharedClassifier: true}, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.bin")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	weights := 4 * uint64(m.Config().Params())
	if got := after.TotalAlloc - before.TotalAlloc; got > weights+256<<10 {
		t.Errorf("Load allocated %d bytes for %d bytes of weights (file %d bytes), want at most %d", got, weights, len(b), weights+256<<10)
	}
}

//go:build unix

package sample

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestReadNotRegular checks that Read refuses directories, named pipes and
// devices by their type, without opening or reading them (a FIFO would
// block).
func TestReadNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "q.safetensors")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	cases := []struct{ path, want string }{
		{dir, "sample: " + dir + ": not a regular file: a directory"},
		{fifo, "sample: " + fifo + ": not a regular file: a named pipe (FIFO)"},
		{"/dev/null", "sample: /dev/null: not a regular file: a character device"},
		{"/dev/zero", "sample: /dev/zero: not a regular file: a character device"},
		{filepath.Join(dir, "missing.npz"), "sample: " + filepath.Join(dir, "missing.npz") + ": no such file or directory"},
	}
	for _, c := range cases {
		if _, err := os.Stat(c.path); err != nil && !strings.Contains(c.path, "missing") {
			t.Logf("skipping %s: %v", c.path, err)
			continue
		}
		_, err := Read(c.path)
		if err == nil || err.Error() != c.want {
			t.Errorf("Read(%s) = %v, want %q", c.path, err, c.want)
		}
	}
}

// sparseFile writes head at the start of a sparse file of size bytes.
func sparseFile(t *testing.T, name string, head []byte, size int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Skipf("no sparse files here: %v", err)
	}
	return path
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestLyingHeaderBoundedMemory reads huge sparse files whose first bytes
// already prove them broken, or whose header declares more than a sample may
// hold, and checks that each is refused with the exact message after
// allocating less than 1 MiB: nothing is read or allocated by what the file
// claims before the claim is checked.
func TestLyingHeaderBoundedMemory(t *testing.T) {
	const size = 26 << 30 // 26 GiB, sparse
	hdr := func(h string) []byte {
		b := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
		return append(b, h...)
	}
	// A q, k, v header whose data fits the file exactly, but holds 1.5 x
	// MaxElements floats.
	n := 1 << 14
	qkv := header("",
		tinfo("k", "F32", []int{1, 1, n, n}, 0, n*n*4),
		tinfo("q", "F32", []int{1, 4, n, n}, n*n*4, 5*n*n*4),
		tinfo("v", "F32", []int{1, 1, n, n}, 5*n*n*4, 6*n*n*4))
	cases := []struct {
		name string
		head []byte
		size int64
		want string
	}{
		{"len2_63.safetensors", []byte{0, 0, 0, 0, 0, 0, 0, 0x80}, size, "header length 9223372036854775808 exceeds the 104857600-byte limit"},
		{"not_json.safetensors", []byte("\x10\x00\x00\x00\x00\x00\x00\x00not json at all!"), size, "header does not start with '{'"},
		{"zeros.safetensors", nil, size, "header does not start with '{'"},
		{"zeros.npy", nil, size, `missing the \x93NUMPY magic`},
		{"too_many.safetensors", hdr(qkv), int64(8+len(qkv)) + 6*int64(n)*int64(n)*4,
			"the tensors hold 1610612736 elements in all, more than MaxElements = 1073741824"},
	}
	for _, c := range cases {
		path := sparseFile(t, c.name, c.head, c.size)
		var err error
		got := allocated(func() { _, err = Read(path) })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
		if got > 1<<20 {
			t.Errorf("%s: Read allocated %d bytes to reject a %d-byte file, want < 1 MiB", c.name, got, c.size)
		}
		t.Logf("%s (%d bytes): rejected after allocating %d bytes", c.name, c.size, got)
	}
}

// TestReadMemoryWithinSample checks that reading a valid file allocates
// about the decoded sample and one chunk, not the file on top of it.
func TestReadMemoryWithinSample(t *testing.T) {
	s := testSample(2, 4, 2, 256, 64, true, false) // 256 Ki floats, 1 MiB
	for _, dt := range []string{F32, F16} {
		path := filepath.Join(t.TempDir(), "s.safetensors")
		if err := WriteFile(path, s, dt); err != nil {
			t.Fatal(err)
		}
		var err error
		got := allocated(func() { _, err = Read(path) })
		if err != nil {
			t.Fatal(err)
		}
		want := uint64(4*(len(s.Q)+len(s.K)+len(s.V))) + 3*chunk + 64<<10 // one chunk buffer per tensor
		if got > want {
			t.Errorf("%s: Read allocated %d bytes for a sample of %d floats, want at most %d", dt, got, len(s.Q)+len(s.K)+len(s.V), want)
		}
	}
}

// TestWriteFileRefusesNonRegular checks that WriteFile never renames over a
// device or a named pipe.
func TestWriteFileRefusesNonRegular(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "out.safetensors")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	s := testSample(1, 2, 1, 8, 4, true, false)
	want := "sample: " + fifo + ": not a regular file: a named pipe (FIFO); WriteFile replaces regular files only (write to it with WriteSafetensors)"
	if err := WriteFile(fifo, s, F32); err == nil || err.Error() != want {
		t.Errorf("WriteFile(FIFO) = %v, want %q", err, want)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced")
	}
}

// TestCheckSurrogates: a valid UTF-16 surrogate pair in the header
// decodes and round-trips (core/safetensors refuses lone ones; its
// TestCheckSurrogates tests the escapes).
func TestCheckSurrogates(t *testing.T) {
	// A valid pair decodes and round-trips.
	s, err := Decode("pair.safetensors", qkvST(`{"model":"smile \ud83d\ude00"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Meta.Model != "smile \U0001F600" {
		t.Errorf("model %q", s.Meta.Model)
	}
}

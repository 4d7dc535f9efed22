//go:build unix

package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/sample"
)

// tinyModel writes a small random llama2.c checkpoint, its weights
// multiplied by scale, and returns its path.
func tinyModel(t *testing.T, scale float32) string {
	t.Helper()
	m, err := llama.Random(llama.Config{Dim: 16, HiddenDim: 32, Layers: 1, Heads: 2, KVHeads: 2, Vocab: 32, SeqLen: 32, SharedClassifier: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if scale != 1 {
		for i := llama.HeaderSize; i+4 <= len(b); i += 4 {
			v := math.Float32frombits(binary.LittleEndian.Uint32(b[i:]))
			binary.LittleEndian.PutUint32(b[i:], math.Float32bits(v*scale))
		}
	}
	p := filepath.Join(t.TempDir(), "model.bin")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantFail checks an exit code and that stderr holds want.
func wantFail(t *testing.T, code int, stderr string, wantCode int, want string) {
	t.Helper()
	if code != wantCode || !strings.Contains(stderr, want) {
		t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, wantCode, want)
	}
}

// TestOutputNeverReplacesInput checks that no command writes over its own
// input, by the same path or another path to the same file.
func TestOutputNeverReplacesInput(t *testing.T) {
	p := tinyFile(t)
	before, _ := os.ReadFile(p)
	link := filepath.Join(t.TempDir(), "link.safetensors")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := cli(t, "heatmap", "-o", p, p)
	wantFail(t, code, stderr, exitUsage, "-o "+p+": is an input of this command; writing it would destroy it")
	code, _, stderr = cli(t, "heatmap", "-o", link, p)
	wantFail(t, code, stderr, exitUsage, "-o "+link+": is the input "+p+" (the same file)")
	code, _, stderr = cli(t, "curve", "-ratios", "0.5", "-methods", "topk", "-o", p, p)
	wantFail(t, code, stderr, exitUsage, "-o "+p+": is an input")
	code, _, stderr = cli(t, "sweep", "-ratios", "0.5", "-methods", "topk", "-json", p, p)
	wantFail(t, code, stderr, exitUsage, "-json "+p+": is an input")
	csv := filepath.Join(t.TempDir(), "x.csv")
	code, _, stderr = cli(t, "sweep", "-ratios", "0.5", "-methods", "topk", "-json", csv, "-csv", csv, p)
	wantFail(t, code, stderr, exitUsage, "-csv and -json name the same file "+csv)
	if after, _ := os.ReadFile(p); !bytes.Equal(before, after) {
		t.Error("the input changed")
	}

	model := tinyModel(t, 1)
	mb, _ := os.ReadFile(model)
	code, _, stderr = cli(t, "capture", "-tokens", "8", "-o", model, model)
	wantFail(t, code, stderr, exitUsage, "-o "+model+": is an input of this command")
	code, _, stderr = cli(t, "capture", "-tokens", "8", "-z", p, "-o", p, model)
	wantFail(t, code, stderr, exitUsage, "-o "+p+": is an input of this command")
	if after, _ := os.ReadFile(model); !bytes.Equal(mb, after) {
		t.Error("the model changed")
	}
}

// TestOutputNonRegular checks that devices and named pipes are written as
// they are (never replaced by a regular file), that "-" is standard output,
// and that a write error is exit 1 naming the flag and the file.
func TestOutputNonRegular(t *testing.T) {
	p := tinyFile(t)
	if fi, err := os.Stat("/dev/null"); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		code, _, stderr := cli(t, "heatmap", "-o", "/dev/null", p)
		if code != 0 {
			t.Errorf("heatmap -o /dev/null: exit %d: %s", code, stderr)
		}
		if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
			t.Fatalf("/dev/null is no longer a device: %v %v", fi.Mode(), err)
		}
	}
	if _, err := os.Stat("/dev/full"); err == nil {
		code, _, stderr := cli(t, "sweep", "-ratios", "0.5", "-methods", "topk", "-csv", "/dev/full", p)
		wantFail(t, code, stderr, exitFail, "haeols: sweep: -csv /dev/full: writing a character device: no space left on device")
	}

	fifo := filepath.Join(t.TempDir(), "out.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	code, _, stderr := cli(t, "sweep", "-ratios", "0.5", "-methods", "topk", "-csv", fifo, p)
	if code != 0 {
		t.Fatalf("sweep -csv FIFO: exit %d: %s", code, stderr)
	}
	if b := <-got; !bytes.HasPrefix(b, []byte("ratio,method,layer,head,status")) {
		t.Errorf("read %q from the FIFO, want the CSV", b)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v %v", fi.Mode(), err)
	}

	code, out, stderr := cli(t, "heatmap", "-o", "-", p)
	if code != 0 || !strings.HasPrefix(out, "\x89PNG") || !strings.Contains(stderr, "wrote - (") {
		t.Errorf("heatmap -o -: exit %d, stdout %.8q, stderr %q; want a PNG on stdout and the note on stderr", code, out, stderr)
	}
	code, _, stderr = cli(t, "heatmap", "-o", t.TempDir(), p)
	wantFail(t, code, stderr, exitFail, ": is a directory; name a file")
}

// TestOutputReplacesRegularAtomically checks that a regular output is
// replaced whole, through a symbolic link (kept) to its target, and that a
// failure leaves neither a partial file nor a temporary one.
func TestOutputReplacesRegularAtomically(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.png")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.png")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := writeOutput("o", link, io.Discard, nil, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("target holds %q", b)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	err := writeOutput("o", target, io.Discard, nil, func(w io.Writer) error {
		io.WriteString(w, "partial")
		return errors.New("render failed")
	})
	if err == nil || err.Error() != "-o "+target+": render failed" {
		t.Errorf("error %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Errorf("a failed write changed the target to %q", b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("files left behind: %v", ents)
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

// TestStdoutFailureIsExit1 checks that a table or JSON document that cannot
// be written to standard output (a full device, a closed descriptor, a
// broken pipe) is exit 1 with a message, not success.
func TestStdoutFailureIsExit1(t *testing.T) {
	p := tinyFile(t)
	var errb bytes.Buffer
	if code := run([]string{"info", p}, failWriter{}, &errb); code != exitFail || !strings.Contains(errb.String(), "haeols: info: writing standard output: broken pipe") {
		t.Errorf("info to a broken pipe: exit %d, %q", code, errb.String())
	}
	if full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0); err == nil {
		errb.Reset()
		code := run([]string{"run", "-methods", "topk", "-json", p}, full, &errb)
		full.Close()
		if code != exitFail || !strings.Contains(errb.String(), "haeols: run: writing standard output: no space left on device") {
			t.Errorf("run to /dev/full: exit %d, %q", code, errb.String())
		}
	}
	closed, err := os.CreateTemp(t.TempDir(), "closed")
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	errb.Reset()
	if code := run([]string{"run", "-methods", "topk", p}, closed, &errb); code != exitFail || !strings.Contains(errb.String(), "haeols: run: writing standard output: file already closed") {
		t.Errorf("run to a closed file: exit %d, %q", code, errb.String())
	}
}

// writeSample writes s as F32 safetensors and returns the path.
func writeSample(t *testing.T, name string, s *sample.Sample) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := sample.WriteFile(p, s, sample.F32); err != nil {
		t.Fatal(err)
	}
	return p
}

// scaled returns the tiny sample with every q and k multiplied by f.
func scaled(t *testing.T, f float32) *sample.Sample {
	s, err := sample.Read(tinyFile(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Q {
		s.Q[i] *= f
	}
	for i := range s.K {
		s.K[i] *= f
	}
	return s
}

// TestNonFiniteResultsAreErrors checks that values that overflow the
// analysis are an error naming the file, the head and the cause in the
// tables, in JSON and in every command, never "-" or null with exit 0.
func TestNonFiniteResultsAreErrors(t *testing.T) {
	p := writeSample(t, "huge.safetensors", scaled(t, 1e30))
	want := p + ": non-finite result: layer 0 head 0: |q| up to "
	for _, args := range [][]string{
		{"run", p},
		{"run", "-json", p},
		{"sweep", "-ratios", "0.3,0.5", p},
		{"curve", "-ratios", "0.3,0.5", "-o", filepath.Join(t.TempDir(), "c.png"), p},
		{"heatmap", "-o", filepath.Join(t.TempDir(), "h.png"), p},
	} {
		code, out, stderr := cli(t, args...)
		if code != exitFail || !strings.Contains(stderr, want) || strings.Contains(out, "NaN") {
			t.Errorf("%v: exit %d, stdout %.200q, stderr %q; want exit 1 and %q", args, code, out, stderr, want)
		}
	}
}

// TestAnalysisLimitFlag checks the -max-mem limit and its message.
func TestAnalysisLimitFlag(t *testing.T) {
	n := 4096
	s := &sample.Sample{L: 1, H: 1, HKV: 1, N: n, D: 1, Q: make([]float32, n), K: make([]float32, n), V: make([]float32, n)}
	for i := range n {
		s.Q[i], s.K[i], s.V[i] = float32(i%7)/7, float32(i%5)/5, float32(i%3)/3
	}
	p := writeSample(t, "long.safetensors", s)
	code, _, stderr := cli(t, "run", "-methods", "topk", "-max-mem", "1", p)
	wantFail(t, code, stderr, exitFail, p+": sample too large to analyse: analysing its 1 KV head(s) (N=4096, d=1, 1 query head(s) per KV head) and compressing one takes about 9 MiB, more than 1 MiB, the limit set (Options.MaxAnalysisBytes); raise it with -max-mem MiB")
	if code, _, stderr := cli(t, "run", "-methods", "topk", "-max-mem", "10", p); code != 0 {
		t.Errorf("-max-mem 10: exit %d: %s", code, stderr)
	}
	code, _, stderr = cli(t, "run", "-max-mem", "-3", p)
	wantFail(t, code, stderr, exitUsage, "-max-mem -3: want >= 0")
	many := make([]string, 1001)
	for i := range many {
		many[i] = fmt.Sprint(float64(i+1) / 1001)
	}
	code, _, stderr = cli(t, "sweep", "-ratios", strings.Join(many, ","), p)
	wantFail(t, code, stderr, exitUsage, "-ratios: 1001 ratios, more than the 1000 one run evaluates")
}

// TestCaptureRefusesVanishedActivations checks that a checkpoint whose
// huge weights make every activation 0 is an error, not a file of zeros,
// and that -tokens and -prefix out of range name the flag.
func TestCaptureRefusesVanishedActivations(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.safetensors")
	model := tinyModel(t, 1e30)
	code, _, stderr := cli(t, "capture", "-tokens", "16", "-o", out, model)
	wantFail(t, code, stderr, exitFail, model+": layer 0 KV head 0: every k is 0: the activations vanished or overflowed")
	if _, err := os.Stat(out); err == nil {
		t.Error("a file was written")
	}
	good := tinyModel(t, 1)
	code, _, stderr = cli(t, "capture", "-tokens", "1", "-o", out, good)
	wantFail(t, code, stderr, exitUsage, "-tokens 1 outside [3, 32]")
	code, _, stderr = cli(t, "capture", "-tokens", "8", "-prefix", "8", "-o", out, good)
	wantFail(t, code, stderr, exitUsage, "-prefix 8 outside [2, 7]")
	code, _, stderr = cli(t, "capture", "-tokens", "8", "-temperature", "NaN", "-o", out, good)
	wantFail(t, code, stderr, exitUsage, "-temperature NaN: want a finite value >= 0")
	code, _, stderr = cli(t, "capture", "-tokens", "8", "-prompt", "1,32", "-o", out, good)
	wantFail(t, code, stderr, exitUsage, "-prompt: token id 32 outside the vocabulary [0, 32) of "+good)
	if code, _, stderr := cli(t, "capture", "-tokens", "8", "-o", out, good); code != 0 {
		t.Errorf("capture: exit %d: %s", code, stderr)
	}
}

// TestInputsNotRegular checks that a FIFO, a directory or a device given as
// an input is refused by its type (a FIFO would hang the read).
func TestInputsNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	model := tinyModel(t, 1)
	out := filepath.Join(dir, "x.safetensors")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"info", fifo}, "sample: " + fifo + ": not a regular file: a named pipe (FIFO)"},
		{[]string{"run", dir}, "sample: " + dir + ": not a regular file: a directory"},
		{[]string{"info", "/dev/zero"}, "sample: /dev/zero: not a regular file: a character device"},
		{[]string{"capture", "-o", out, fifo}, "llama: " + fifo + ": not a regular file: a named pipe (FIFO)"},
		{[]string{"capture", "-tokens", "8", "-z", fifo, "-o", out, model}, "llama: " + fifo + ": not a regular file: a named pipe (FIFO)"},
	} {
		code, _, stderr := cli(t, c.args...)
		wantFail(t, code, stderr, exitFail, c.want)
	}
}

// TestTerminalSafeOutput checks that metadata and file names with control
// characters are printed escaped, so a file cannot forge lines or send
// escape sequences to the terminal.
func TestTerminalSafeOutput(t *testing.T) {
	s, err := sample.Read(tinyFile(t))
	if err != nil {
		t.Fatal(err)
	}
	s.Meta.Model = "m\x1b]0;owned\x07"
	s.Meta.Description = "ok\nfile         forged.safetensors\r"
	s.Meta.Extra = map[string]string{"k\x1b[2J": "v\x1b"}
	p := writeSample(t, "evil\x1b[31m\n.safetensors", s)
	code, out, stderr := cli(t, "info", p)
	if code != 0 {
		t.Fatalf("info: exit %d: %s", code, stderr)
	}
	for _, want := range []string{`model        m\x1b]0;owned\x07`, `description  ok\nfile         forged.safetensors\r`, `meta         k\x1b[2J = "v\x1b"`, `evil\x1b[31m\n.safetensors`} {
		if !strings.Contains(out, want) {
			t.Errorf("info output lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"\x1b", "\x07", "\r"} {
		if strings.Contains(out, bad) || strings.Contains(stderr, bad) {
			t.Errorf("output holds a raw %q", bad)
		}
	}
	if strings.Contains(out, "\nfile         forged") {
		t.Errorf("a metadata string forged a line:\n%s", out)
	}
	code, _, stderr = cli(t, "info", filepath.Join(t.TempDir(), "no\x1bsuch"))
	if code != exitFail || strings.Contains(stderr, "\x1b") || !strings.Contains(stderr, `no\x1bsuch`) {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr)
	}
}

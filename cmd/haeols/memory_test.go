//go:build unix

package main

import (
	"bytes"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/sample"
)

// TestMain runs the command itself when HAEOLS_TEST_MAIN is 1 (for the
// tests that measure a whole process), else the tests, which run the
// command in-process and so leave the collector's memory limit alone.
func TestMain(m *testing.M) {
	if os.Getenv("HAEOLS_TEST_MAIN") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	setMemoryLimit = func(int64) int64 { return 0 }
	os.Exit(m.Run())
}

// process runs haeols ARGS as a process of its own and returns its exit
// code, stderr and peak resident memory in bytes.
func process(t *testing.T, args ...string) (int, string, int64) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "HAEOLS_TEST_MAIN=1", "GOMAXPROCS=16")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	peak, ok := peakRSS(cmd.ProcessState)
	if !ok {
		t.Skip("no peak resident memory on this system")
	}
	return code, stderr.String(), peak
}

// TestMemoryBound: with every method, haeols run stays within the memory
// it promises (the sample, -max-mem, and 64 MiB for the runtime and the
// file as read), measured as the process's peak resident memory; under a
// -max-mem below the estimate it refuses, naming the file, the estimate
// and the flag, having allocated little beyond the sample.
func TestMemoryBound(t *testing.T) {
	if testing.Short() || runtime.GOOS != "linux" {
		t.Skip("measures a process's peak memory (Linux, not -short)")
	}
	// 8 KV heads: 16 workers would run 8 jobs at once, where the limit
	// has room for the analyses and one.
	n, d, h := 1<<14, 32, 8
	s := &sample.Sample{L: 1, H: h, HKV: h, N: n, D: d, Q: make([]float32, h*n*d), K: make([]float32, h*n*d), V: make([]float32, h*n*d)}
	for i := range s.Q {
		s.Q[i] = float32(i%13)/13 - 0.5
	}
	for i := range s.K {
		s.K[i], s.V[i] = float32(i%11)/11-0.5, float32(i%7)/7-0.5
	}
	p := writeSample(t, "long.safetensors", s)
	need := core.AnalysisBytes(s, core.Options{}) + core.WorkBytes(s)
	sampleBytes := int64(4 * (len(s.Q) + len(s.K) + len(s.V)))
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	maxMem := need>>20 + 1 // MiB: room for the analyses and one job
	code, stderr, peak := process(t, "run", "-ratio", "0.3", "-max-mem", itoa(maxMem), p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	bound := sampleBytes + maxMem<<20 + runtimeSlack + fi.Size()
	t.Logf("peak %d MiB; bound %d MiB (sample %d, -max-mem %d, file %d, runtime %d)", peak>>20, bound>>20, sampleBytes>>20, maxMem, fi.Size()>>20, runtimeSlack>>20)
	if peak > bound {
		t.Errorf("peak resident memory %d MiB, over the bound of %d MiB", peak>>20, bound>>20)
	}
	code, stderr, peak = process(t, "run", "-max-mem", itoa(maxMem/2), p)
	if code != exitFail || !strings.Contains(stderr, p+": sample too large to analyse") || !strings.Contains(stderr, "takes about") || !strings.Contains(stderr, "-max-mem") {
		t.Errorf("under half the estimate: exit %d: %s", code, stderr)
	}
	if limit := sampleBytes + runtimeSlack + fi.Size(); peak > limit {
		t.Errorf("refusing took %d MiB, more than the sample and the file (%d MiB)", peak>>20, limit>>20)
	}
}

func itoa(x int64) string { return strconv.FormatInt(x, 10) }

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/haeols/haeols/internal/termsafe"
)

// Exit codes, documented in the top-level usage.
const (
	exitOK    = 0 // success
	exitFail  = 1 // failure: unreadable or bad file, computation error, cannot write output
	exitUsage = 2 // usage: unknown subcommand, bad flag or flag value
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(e *env, args []string) error
}

// commands lists the subcommands in the order of the usage text.
var commands = []command{
	{"gen", "write a synthetic sample (a generator preset) to a safetensors file", cmdGen},
	{"gen-model", "write a constructed model (induction: it copies from its context) to a GGUF file", cmdGenModel},
	{"info", "describe a sample: shapes, prefix/probe split, scale, metadata, needles, tokens", cmdInfo},
	{"run", "compress every head at one ratio with chosen methods and print the errors", cmdRun},
	{"sweep", "ratios x methods x heads on all cores; CSV/JSON output and a summary table", cmdSweep},
	{"heatmap", "PNG of one head's attention: original, compressed, |difference|", cmdHeatmap},
	{"curve", "PNG of error against ratio, one line per method", cmdCurve},
	{"capture", "run a model (llama2.c .bin, GGUF, Hugging Face folder) and write its real q/k/v as a sample", cmdCapture},
	{"eval", "what the model says with a compressed cache: kl, agree, ppl_ratio, needle_acc per method and ratio", cmdEval},
	{"verify", "check the CPU and GPU (WGSL) kernels against float64 on real inputs", cmdVerify},
	{"serve", "serve the in-browser simulator (make web) on 127.0.0.1 and print the address", cmdServe},
}

// env is what a subcommand writes to.
type env struct {
	cmd            string
	stdout, stderr io.Writer
	// progress is true when stderr is a terminal (progress bars allowed).
	progress bool
}

// usageError marks an error in how the tool was called (exit code 2).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

// usagef returns a usageError with the formatted message.
func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// errHelp is returned after -h printed a subcommand's usage (exit code 0).
var errHelp = errors.New("help shown")

// run is the whole program: it runs the subcommand named by args[0] and
// returns the exit code. It is called in-process by the tests.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		topUsage(stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(rest) > 0 {
			return run([]string{rest[0], "-h"}, stdout, stderr)
		}
		topUsage(stdout)
		return exitOK
	}
	for _, c := range commands {
		if c.name != name {
			continue
		}
		out := &checkedWriter{w: stdout}
		e := &env{cmd: name, stdout: out, stderr: stderr, progress: stderr == io.Writer(os.Stderr) && isTerminal(os.Stderr)}
		err := c.run(e, rest)
		if out.err != nil {
			// Whatever else failed after it, losing the output is what
			// the user must hear about.
			err = fmt.Errorf("writing standard output: %w", out.err)
		}
		var ue usageError
		switch {
		case err == nil, errors.Is(err, errHelp):
			return exitOK
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "haeols: %s: %s\nRun 'haeols %s -h' for usage.\n", name, termsafe.String(err.Error()), name)
			return exitUsage
		default:
			fmt.Fprintf(stderr, "haeols: %s: %s\n", name, termsafe.String(err.Error()))
			return exitFail
		}
	}
	fmt.Fprintf(stderr, "haeols: unknown subcommand %q (valid: %s)\nRun 'haeols -h' for usage.\n", name, commandNames())
	return exitUsage
}

func commandNames() string {
	var n []string
	for _, c := range commands {
		n = append(n, c.name)
	}
	return strings.Join(n, ", ")
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func topUsage(w io.Writer) {
	fmt.Fprint(w, `haeols: HAE-OLS KV-cache compression and its baselines on a sample of attention data.

Usage:
  haeols SUBCOMMAND [flags] [FILE]
  haeols SUBCOMMAND -h          usage of one subcommand, with an example

Subcommands:
`)
	for _, c := range commands {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, `
FILE is a sample (.safetensors, .npz or .npy). Left out, haeols uses
%s if it exists in the working directory, else
generates the "default" preset in memory, and says which on stderr. Flags
may come before or after FILE.

Exit codes:
  0  success
  1  failure: missing, unreadable or invalid file, computation error or a
     result that is not a finite number, output not writable (standard
     output included)
  2  usage error: unknown subcommand, unknown flag, bad flag value (e.g.
     -ratio 1.5 or an unknown method, an output naming an input); the
     message names the flag and the valid values
Errors go to stderr, prefixed "haeols: ".

Example:
  haeols gen -preset needle -o needle.safetensors
  haeols run -ratio 0.3 -methods hae-ols,topk needle.safetensors
`, defaultSamplePath)
}

// newFlags returns a flag set that reports nothing itself: run prints the
// errors, and parse prints the usage on -h.
func newFlags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args with flags and positional arguments in any order (up to
// "--", after which everything is positional) and returns the positional
// ones. At most maxPos are allowed. On -h it prints usage, an example and
// the flags to stdout and returns errHelp.
func parse(e *env, fs *flag.FlagSet, args []string, usage string, maxPos int) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				printUsage(e.stdout, fs, usage)
				return nil, errHelp
			}
			return nil, usageError{err}
		}
		rest := fs.Args()
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			pos = append(pos, rest...)
			break
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	if maxPos >= 0 && len(pos) > maxPos {
		if maxPos == 0 {
			return nil, usagef("unexpected argument %q (this subcommand takes no FILE)", pos[0])
		}
		return nil, usagef("too many arguments %q: want at most %d FILE", pos, maxPos)
	}
	return pos, nil
}

func printUsage(w io.Writer, fs *flag.FlagSet, usage string) {
	fmt.Fprintln(w, strings.TrimSpace(usage))
	fmt.Fprintln(w, "\nFlags:")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// parseFloats parses a comma-separated list of numbers for the named flag.
func parseFloats(flagName, s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, usagef("-%s: %q is not a number", flagName, f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, usagef("-%s: empty list", flagName)
	}
	return out, nil
}

// parseRatios parses and checks a ratio list: each in (0, 1], duplicates
// removed, sorted ascending.
func parseRatios(flagName, s string) ([]float64, error) {
	rs, err := parseFloats(flagName, s)
	if err != nil {
		return nil, err
	}
	for _, r := range rs {
		if err := checkRatio(flagName, r); err != nil {
			return nil, err
		}
	}
	sort.Float64s(rs)
	out := rs[:1]
	for _, r := range rs[1:] {
		if r != out[len(out)-1] {
			out = append(out, r)
		}
	}
	if len(out) > maxRatios {
		return nil, usagef("-%s: %d ratios, more than the %d one run evaluates", flagName, len(out), maxRatios)
	}
	return out, nil
}

// maxRatios bounds a ratio list (each ratio is a compression of every head
// with every method).
const maxRatios = 1000

func checkRatio(flagName string, r float64) error {
	if !(r > 0 && r <= 1) {
		return usagef("-%s %v outside (0, 1]: the ratio is memory kept over full memory", flagName, r)
	}
	return nil
}

// quotePath is a file name as messages print it: as given, with control
// characters and invalid bytes escaped (termsafe).
func quotePath(p string) string { return termsafe.String(p) }

// fmtFloat formats a metric for tables: 4 significant digits, "-" for NaN.
func fmtFloat(x float64) string {
	if x != x {
		return "-"
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

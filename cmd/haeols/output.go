package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/haeols/haeols/internal/inputs"
)

// This file is where every subcommand's output goes through: files named by
// a flag (writeOutput) and standard output (checkedWriter). The rules:
//
//   - an output never replaces an input of the same command (the same file
//     by device and inode, through any link or path spelling);
//   - a regular file (or a new one) is written to a temporary file in its
//     directory and renamed over it, so that a failed run leaves the old
//     file whole and no partial one; a symbolic link is followed and its
//     target replaced, the link kept;
//   - anything else that already exists (a device such as /dev/null, a
//     named pipe) is opened and written as it is, never renamed over, and
//     "-" is standard output; the output is made in memory first, so that an
//     error while making it writes nothing;
//   - a directory or a socket is refused;
//   - every write and close is checked, and a failure is the command's error
//     (exit status 1), naming the flag and the file.

// stdoutName is the output path that means standard output.
const stdoutName = "-"

// writeOutput writes what write produces to the output named by flag -name
// (e.g. "o", "csv") at path, following the rules above; stdout is used for
// "-". inputs are the files the command read (empty strings are skipped).
// The error names the flag and the path.
func writeOutput(name, path string, stdout io.Writer, ins []string, write func(io.Writer) error) error {
	fail := func(err error) error { return fmt.Errorf("-%s %s: %w", name, quotePath(path), err) }
	if path == "" {
		return fail(errors.New("empty file name"))
	}
	if path == stdoutName {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			return fail(err)
		}
		if _, err := stdout.Write(b.Bytes()); err != nil {
			return fail(fmt.Errorf("writing standard output: %w", err))
		}
		return nil
	}
	if err := checkNotInput(path, ins); err != nil {
		return fail(err)
	}
	target := path
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.Mode().IsRegular():
		if t, err := filepath.EvalSymlinks(path); err == nil {
			target = t
		}
	case err == nil && fi.IsDir():
		return fail(errors.New("is a directory; name a file"))
	case err == nil && fi.Mode()&fs.ModeSocket != 0:
		return fail(errors.New("is a socket; name a file, a device, a named pipe or - for standard output"))
	case err == nil:
		return writeDirect(path, fi, write, fail)
	case !errors.Is(err, fs.ErrNotExist):
		return fail(err)
	}
	return writeReplace(target, write, fail)
}

// writeDirect writes to an existing device or named pipe as it is.
func writeDirect(path string, fi fs.FileInfo, write func(io.Writer) error, fail func(error) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return fail(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fail(unwrapPathErr(err))
	}
	_, werr := f.Write(b.Bytes())
	cerr := f.Close()
	if werr != nil {
		return fail(fmt.Errorf("writing %s: %w", inputs.Kind(fi.Mode()), unwrapPathErr(werr)))
	}
	if cerr != nil {
		return fail(fmt.Errorf("closing %s: %w", inputs.Kind(fi.Mode()), unwrapPathErr(cerr)))
	}
	return nil
}

// writeReplace writes a regular file through a temporary file renamed over
// it.
func writeReplace(path string, write func(io.Writer) error, fail func(error) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fail(unwrapPathErr(err))
	}
	tmp := f.Name()
	err = f.Chmod(0o644)
	if err == nil {
		err = write(f)
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("closing: %w", unwrapPathErr(cerr))
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fail(unwrapPathErr(err))
	}
	return nil
}

// checkNotInput refuses an output path that is one of the inputs.
func checkNotInput(path string, ins []string) error {
	out, err := os.Stat(path)
	if err != nil {
		return nil // a new file is no input
	}
	for _, in := range ins {
		if in == "" {
			continue
		}
		if fi, err := os.Stat(in); err == nil && os.SameFile(out, fi) {
			if in == path {
				return errors.New("is an input of this command; writing it would destroy it (name another file)")
			}
			return fmt.Errorf("is the input %s (the same file); writing it would destroy it (name another file)", quotePath(in))
		}
	}
	return nil
}

// checkOutputs checks, before a command does its work, that none of its
// outputs (flag name, path) is one of its inputs and that no two name the
// same file: a usage error naming the flag. writeOutput checks the inputs
// again when it writes.
func checkOutputs(ins []string, outs ...[2]string) error {
	for _, o := range outs {
		if o[1] == "" || o[1] == stdoutName {
			continue
		}
		if err := checkNotInput(o[1], ins); err != nil {
			return usagef("-%s %s: %w", o[0], quotePath(o[1]), err)
		}
	}
	return checkDistinct(outs...)
}

// checkDistinct refuses two output flags naming the same file (a later one
// would replace the earlier).
func checkDistinct(outs ...[2]string) error {
	for i, a := range outs {
		if a[1] == "" || a[1] == stdoutName {
			continue
		}
		for _, b := range outs[i+1:] {
			if b[1] == "" || b[1] == stdoutName {
				continue
			}
			same := a[1] == b[1]
			if fa, err := os.Stat(a[1]); err == nil {
				if fb, err := os.Stat(b[1]); err == nil && os.SameFile(fa, fb) {
					same = true
				}
			}
			if same {
				return usagef("-%s and -%s name the same file %s", a[0], b[0], quotePath(a[1]))
			}
		}
	}
	return nil
}

// unwrapPathErr drops an *fs.PathError's operation and path (the messages
// name the flag and the file already).
func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// reportTo is where a command says what it wrote: stdout, unless the
// output itself went there.
func (e *env) reportTo(paths ...string) io.Writer {
	for _, p := range paths {
		if p == stdoutName {
			return e.stderr
		}
	}
	return e.stdout
}

// checkedWriter is standard output as the subcommands see it: it remembers
// the first write error (a full disk, a closed pipe or descriptor) and
// drops everything after it, so that run can fail with exit status 1
// instead of reporting success with the output lost.
type checkedWriter struct {
	w   io.Writer
	err error
}

// Write writes p, or returns the first error again.
func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		c.err = unwrapPathErr(err)
	}
	return n, err
}

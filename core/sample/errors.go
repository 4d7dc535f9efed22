package sample

import (
	"errors"
	"strconv"
	"strings"
)

// Error is the error of every reader, writer and Validate in this package. It
// names the file (when there is one), the tensor or metadata key the problem is
// about (when there is one) and the problem, and wraps the underlying cause.
//
// Its text reads, for example,
//
//	sample: x.safetensors: tensor "k": data_offsets [0, 96] hold 96 bytes, shape [1 2 3 4] dtype F16 needs 48
type Error struct {
	File   string // file name as given to Read or Decode; "" for an in-memory sample
	Tensor string // "q", "k", "v", "attn" (or the offending name), or ""
	Key    string // metadata key, or ""
	Err    error  // the problem
}

// Error returns the message, shaped as
//
//	sample: FILE: tensor "T": metadata "KEY": PROBLEM
//
// without the parts that are empty.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("sample: ")
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	if e.Tensor != "" {
		b.WriteString("tensor ")
		b.WriteString(strconv.Quote(e.Tensor))
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString("metadata ")
		b.WriteString(strconv.Quote(e.Key))
		b.WriteString(": ")
	}
	if e.Err != nil {
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying problem.
func (e *Error) Unwrap() error { return e.Err }

// withFile sets the file name on err if it is an *Error without one, and
// wraps any other error in an *Error naming the file.
func withFile(file string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		if e.File == "" {
			e.File = file
		}
		return err
	}
	return &Error{File: file, Err: err}
}

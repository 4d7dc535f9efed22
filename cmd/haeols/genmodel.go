package main

import (
	"fmt"
	"io"

	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/induction"
	"github.com/haeols/haeols/core/model/quant"
)

const genModelUsage = `
Usage: haeols gen-model [-dtype F32] [-o FILE] induction

Writes a model whose weights are constructed, not trained, as a GGUF file
(default NAME.gguf) that capture, eval and the browser open. The same name
and -dtype give the same file on every machine.

Models:
  induction  two layers over byte tokens: eight previous-token heads (RoPE
             alone) and an induction head that continues any 8-token
             context seen before with what followed it, so that with the
             full cache it answers the pass key at every depth
             (docs/INDUCTION.md)

Example:
  haeols gen-model -o induction.gguf induction
  haeols eval -task passkey -tokens 1024 -depths 0,0.5,1 -ratios 0.1,0.3,0.5 induction.gguf
`

func cmdGenModel(e *env, args []string) error {
	fs := newFlags("gen-model")
	dtype := fs.String("dtype", "F32", "stored number type of the matrices: F32 or F16")
	out := fs.String("o", "", "output file (default NAME.gguf; - for standard output)")
	pos, err := parse(e, fs, args, genModelUsage, 1)
	if err != nil {
		return err
	}
	if len(pos) != 1 || pos[0] != "induction" {
		got := "no model"
		if len(pos) == 1 {
			got = fmt.Sprintf("%q", pos[0])
		}
		return usagef("gen-model: %s: want the model's name (induction)", got)
	}
	var typ quant.Type
	switch *dtype {
	case "F32":
		typ = quant.F32
	case "F16":
		typ = quant.F16
	default:
		return usagef("-dtype %q: want F32 or F16", *dtype)
	}
	ck, err := induction.Checkpoint()
	if err != nil {
		return err
	}
	path := *out
	if path == "" {
		path = pos[0] + ".gguf"
	}
	opt := model.GGUFOptions{Name: pos[0], Type: func(_ string, w *model.Weight) quant.Type {
		if w.Rows == 1 {
			return quant.F32 // norms stay exact
		}
		return typ
	}}
	if err := writeOutput("o", path, e.stdout, nil, func(w io.Writer) error { return model.WriteGGUF(w, ck, opt) }); err != nil {
		return err
	}
	c := ck.Config
	fmt.Fprintf(e.reportTo(path), "wrote %s: %s, %d layers, %d heads (%d KV) of %d, dim %d, vocab %d, context %d, %s\n",
		quotePath(path), pos[0], c.Layers, c.Heads, c.KVHeads, c.HeadDim, c.Dim, c.Vocab, c.Context, *dtype)
	return nil
}

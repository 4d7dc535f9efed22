//go:build nomodel

package worker

import (
	"fmt"

	"github.com/haeols/haeols/wire"
)

// lmState holds nothing in a build without the model runner.
type lmState struct{}

// errNoModel answers a request that needs the model runner (see says.go):
// the page sends those to a worker running runner.wasm, never to app.wasm.
func errNoModel(op string) error {
	return fmt.Errorf("%s: this worker (app.wasm) has no model runner; models run in runner.wasm", op)
}

func (e *Engine) loadLlama(wire.Request, map[string][]byte, func(float64)) (string, error) {
	return "", errNoModel("load")
}

func (e *Engine) loadCheckpoint(wire.Request, map[string][]byte, func(float64)) (string, error) {
	return "", errNoModel("load")
}

func (e *Engine) prompt(wire.Request, Emit) error { return errNoModel(wire.OpPrompt) }

func (e *Engine) evalOp(wire.Request, Emit, Check) error { return errNoModel(wire.OpEval) }

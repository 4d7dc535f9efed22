// Command runner is the haeols core with its model runner (GOOS=js
// GOARCH=wasm, served as runner.wasm): the same package wasm/worker as the
// worker in app.wasm, with the language models as well (checkpoints,
// tokenizers, decoding with a compressed cache). The page loads it only
// when it first opens a model (web/worker.js#runner), so that the first
// load of the site, where app.wasm runs the worker, carries none of it.
package main

import "github.com/haeols/haeols/wasm/worker"

func main() { worker.Run() }

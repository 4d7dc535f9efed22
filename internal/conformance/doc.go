// Package conformance checks haeols against independent references: the
// llama.cpp library (through the npm package node-llama-cpp, which ships it
// prebuilt) for GGUF forward passes, ggml itself for the quantized blocks
// the fixtures hold, and Hugging Face's tokenizers library (npm
// @huggingface/tokenizers) for tokenizer.json files.
//
// The fixtures are small GGUF models written by the tests, one per
// architecture and tensor type, whose quantized weights come from ggml's
// ggml_quantize_chunk (called through the shared library node-llama-cpp
// ships) rather than from haeols's own quantizers. `make conformance`
// prints one line per fixture; README's "Checked against references"
// states the tolerances and why.
//
// The references are installed by `make conformance-deps` (npm ci in
// testdata/node, with no download or build step). Without them the tests
// skip with that instruction, except under CI=true, where they fail.
package conformance

// Command haeols runs HAE-OLS KV-cache compression and its baselines on a
// sample of attention data from the command line: it generates and
// describes samples, prints per-head errors at one ratio or over a sweep of
// ratios, and renders attention heatmaps and error-against-ratio curves as
// PNG files.
//
// Usage:
//
//	haeols SUBCOMMAND [flags] [FILE]
//
// The subcommands are gen, info, run, sweep, heatmap, curve, capture,
// verify and serve; run "haeols -h" for the list and "haeols SUBCOMMAND -h"
// for the flags of one, with an example. verify checks the CPU and GPU
// (WGSL) kernels against float64; its GPU runner needs cgo, and a binary
// built with CGO_ENABLED=0 checks the CPU kernels only and says so.
//
// Exit codes: 0 success; 1 failure (missing, unreadable or invalid file,
// computation error or a result that is not a finite number, output not
// writable, standard output included, a kernel past its tolerance in
// verify); 2 usage error (unknown subcommand, unknown flag, bad flag value
// such as -ratio 1.5 or an unknown method, an output naming an input).
// Errors go to stderr, prefixed "haeols: ", with control characters
// escaped.
//
// Outputs (-o, -csv, -json) go through output.go: never over an input of
// the same command; devices, named pipes and "-" (standard output) written
// as they are; regular files replaced atomically.
package main

import "os"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

//go:build !(js && wasm)

// Command worker is the haeols core in a Web Worker; it is built with
// GOOS=js GOARCH=wasm as worker.wasm (see `make web`). Built for any other
// platform it only says so.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "worker: build with GOOS=js GOARCH=wasm (make web); it runs in a browser Web Worker")
	os.Exit(2)
}

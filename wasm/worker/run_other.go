//go:build !(js && wasm)

package worker

import (
	"fmt"
	"os"
)

// Run serves a browser's Web Worker; built for any other platform it only
// says so (the Engine is what native code and tests use).
func Run() {
	fmt.Fprintln(os.Stderr, "worker: build with GOOS=js GOARCH=wasm (make web); it runs in a browser Web Worker")
	os.Exit(2)
}

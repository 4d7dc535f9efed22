//go:build !(js && wasm)

// Command verify is `haeols verify` in the browser (verify.html): it is
// built with GOOS=js GOARCH=wasm as verify.wasm (see `make web`). Built for
// any other platform it only says so; natively, run `haeols verify`.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "verify: build with GOOS=js GOARCH=wasm (make web); natively, run `haeols verify`")
	os.Exit(2)
}

//go:build !(js && wasm)

// Command heatmap is the haeols attention heatmap renderer, an ebiten
// program built with GOOS=js GOARCH=wasm as heatmap.wasm (see `make web`)
// and shown by heatmap.html. Built for any other platform it only says so;
// its drawing logic is package github.com/haeols/haeols/ui/heatmap, tested
// natively.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "heatmap: build with GOOS=js GOARCH=wasm (make web); it runs in a browser page (heatmap.html)")
	os.Exit(2)
}

// Package wgsl holds the WGSL compute shaders of HAE-OLS: one source per hot
// kernel of core/kernel, with the same math and the same stability steps
// (row maximum subtracted before exp). Both GPU runners use these sources:
// the native one (wgpu-native through github.com/cogentcore/webgpu) and the
// browser one (WebGPU); see package core/gpu. This package is plain Go with
// no dependencies, so it builds everywhere, also without cgo.
//
// Every shader reads its sizes from a uniform block at binding 0 and its
// arrays from storage buffers at bindings 1, 2, ... in the order listed in
// Kernels; the last Writes bindings are read_write, the others read-only.
package wgsl

import (
	"embed"
	"fmt"
)

//go:embed *.wgsl
var files embed.FS

// Kernel describes one shader: its file, entry points, storage bindings and
// the size of its uniform block.
type Kernel struct {
	Name    string   // file name without .wgsl
	Entries []string // entry points, all with the same bindings
	Inputs  int      // read-only storage buffers, bindings 1..Inputs
	Writes  int      // read_write storage buffers after them
	Uniform int      // bytes of the uniform block at binding 0
}

// Kernels lists every shader in this package.
var Kernels = []Kernel{
	{Name: "logits", Entries: []string{"main"}, Inputs: 3, Writes: 1, Uniform: 32},
	{Name: "softmax", Entries: []string{"main"}, Inputs: 1, Writes: 3, Uniform: 16},
	{Name: "columns", Entries: []string{"colsum", "entropy", "finish"}, Inputs: 1, Writes: 4, Uniform: 32},
	{Name: "rowentropy", Entries: []string{"main"}, Inputs: 1, Writes: 1, Uniform: 16},
	{Name: "weighted", Entries: []string{"main"}, Inputs: 3, Writes: 2, Uniform: 32},
	{Name: "features", Entries: []string{"main"}, Inputs: 3, Writes: 1, Uniform: 16},
	{Name: "errors", Entries: []string{"main"}, Inputs: 2, Writes: 1, Uniform: 16},
}

// Source returns the WGSL source of the named kernel.
func Source(name string) (string, error) {
	b, err := files.ReadFile(name + ".wgsl")
	if err != nil {
		return "", fmt.Errorf("wgsl: no kernel %q: %w", name, err)
	}
	return string(b), nil
}

// Lookup returns the description of the named kernel.
func Lookup(name string) (Kernel, bool) {
	for _, k := range Kernels {
		if k.Name == name {
			return k, true
		}
	}
	return Kernel{}, false
}

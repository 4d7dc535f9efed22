// Package gpu runs the WGSL kernels of package core/wgsl on a GPU through
// WebGPU: natively through wgpu-native (github.com/cogentcore/webgpu: Vulkan,
// Metal, DX12, GL), and in the browser through navigator.gpu (the same Go
// code compiled for GOOS=js, so the same shaders and the same host logic).
//
// The native runner needs cgo. A build without cgo (CGO_ENABLED=0, the
// default when cross-compiling) still compiles this package, but Open then
// returns ErrUnavailable and every caller falls back to the CPU kernels of
// core/kernel.
//
// The kernels have the math and the stability steps of their Go
// counterparts (row maximum subtracted before exp; dot products summed in
// index order; column sums in row order), but GPUs round exp and log
// differently and the row reductions are tree sums, so results agree with
// the CPU within float32 tolerances, not bit for bit: see the tolerances
// in gpu_test.go and `haeols verify`.
package gpu

import (
	"errors"
	"fmt"
)

// ErrUnavailable is returned by Open when no GPU can be used: a build
// without cgo, a browser without WebGPU, or no adapter.
var ErrUnavailable = errors.New("gpu: no GPU available")

// ErrSoftware is returned (wrapped) by Open with Options.HardwareOnly when
// the only adapter is a software one.
var ErrSoftware = fmt.Errorf("%w: only a software adapter", ErrUnavailable)

// Info describes the adapter a Device runs on.
type Info struct {
	Name    string `json:"name"`    // adapter name, e.g. "llvmpipe (LLVM 15.0.6, 256 bits)"
	Vendor  string `json:"vendor"`  // vendor name or id
	Backend string `json:"backend"` // Vulkan, Metal, D3D12, OpenGL, WebGPU
	Type    string `json:"type"`    // DiscreteGPU, IntegratedGPU, CPU, ...
	Driver  string `json:"driver"`
	// Software is true for a CPU (software) adapter such as llvmpipe or
	// SwiftShader.
	Software bool `json:"software"`
	// MaxBinding is the largest storage buffer the device binds, in bytes.
	MaxBinding uint64 `json:"max_binding"`
}

// String is the adapter in one line.
func (i Info) String() string {
	s := i.Name
	if i.Backend != "" {
		s += " (" + i.Backend
		if i.Type != "" {
			s += ", " + i.Type
		}
		s += ")"
	}
	return s
}

// Options choose the adapter.
type Options struct {
	// Fallback asks for the software (fallback) adapter.
	Fallback bool
	// LowPower prefers an integrated GPU; the default prefers a discrete one.
	LowPower bool
	// HardwareOnly refuses a software adapter (llvmpipe, SwiftShader, a
	// fallback adapter) with ErrSoftware, before any shader is compiled.
	HardwareOnly bool
	// Backend limits the native runner to one backend: "vulkan", "gl",
	// "metal" or "dx12" ("" for any). The browser has only WebGPU.
	Backend string
}

// Backends are the values Options.Backend accepts.
var Backends = []string{"", "vulkan", "gl", "metal", "dx12"}

// checkBackend rejects a backend name not in Backends.
func checkBackend(b string) error {
	for _, ok := range Backends {
		if b == ok {
			return nil
		}
	}
	return fmt.Errorf("gpu: unknown backend %q (want one of vulkan, gl, metal, dx12)", b)
}

// unavailable wraps err as ErrUnavailable with its cause.
func unavailable(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrUnavailable, fmt.Sprintf(format, a...))
}

package verify_test

import (
	"fmt"

	"github.com/haeols/haeols/core/gen"
	"github.com/haeols/haeols/core/verify"
)

// Check the CPU kernels of one KV head against float64 (pass a *gpu.Device
// instead of nil to check a GPU's as well).
func ExampleGroup() {
	cfg, _ := gen.DefaultConfig("tiny")
	s, _ := gen.Generate(cfg)
	r, err := verify.Group(s, "tiny", 0, 0, nil, verify.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	worst := 0.0
	for _, k := range r.Kernels {
		worst = max(worst, k.CPUTol)
	}
	fmt.Println("pass:", r.Pass, "kernels:", len(r.Kernels), "worst below 0.1 of tolerance:", worst < 0.1)
	// Output: pass: true kernels: 16 worst below 0.1 of tolerance: true
}

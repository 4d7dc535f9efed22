package gpu_test

import (
	"errors"
	"fmt"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/gen"
	"github.com/haeols/haeols/core/gpu"
)

// Open a GPU, fall back to the CPU without one, and analyse a sample on it:
// the metrics agree with a CPU analysis within float32 tolerances.
func ExampleOpen() {
	opt := core.Options{}
	dev, err := gpu.Open(gpu.Options{})
	switch {
	case errors.Is(err, gpu.ErrUnavailable):
		fmt.Println("no GPU, computing on the CPU:", err)
	case err != nil:
		fmt.Println(err)
		return
	default:
		defer dev.Close()
		fmt.Println("GPU:", dev.Info())
		opt.Accel = dev
	}
	cfg, _ := gen.DefaultConfig("tiny")
	s, _ := gen.Generate(cfg)
	m, err := core.NewModel(s, opt)
	if err != nil {
		fmt.Println(err)
		return
	}
	met, _, err := m.Run("hae-ols", core.DefaultParams(0.3), 0, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("err %.4f\n", met.Err)
}

package half_test

import (
	"fmt"

	"github.com/haeols/haeols/core/half"
)

func ExampleF32ToF16() {
	h := half.F32ToF16(0.1)
	fmt.Printf("%#04x %v\n", h, half.F16ToF32(h))
	fmt.Printf("%#04x\n", half.F32ToF16(1e6)) // too large: +Inf
	// Output:
	// 0x2e66 0.099975586
	// 0x7c00
}

func ExampleRoundBF16() {
	fmt.Println(half.RoundBF16(3.14159265), half.RoundF16(3.14159265))
	// Output: 3.140625 3.140625
}

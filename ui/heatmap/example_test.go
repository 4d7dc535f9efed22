package heatmap_test

import (
	"fmt"

	"github.com/haeols/haeols/ui/heatmap"
)

// The prefix-position axis of a 1984-token head, whole and zoomed in on
// positions 100.5 to 150.5.
func ExampleAxisTicks() {
	fmt.Println(heatmap.AxisTicks(0, 1984, heatmap.AxisTickCount))
	fmt.Println(heatmap.AxisTicks(100.5, 50, heatmap.AxisTickCount))
	// Output:
	// [0 500 1000 1500]
	// [110 120 130 140 150]
}

// The strip and legend colours of a class, and the colour of an attention
// probability on the heatmap's one scale.
func ExampleColors() {
	c, err := heatmap.NewColors(heatmap.DefaultScale(), heatmap.Colormap)
	if err != nil {
		panic(err)
	}
	fmt.Println(heatmap.ClassColor[heatmap.Anchor], c.At(heatmap.DefaultFloor) == c.AtT(0), c.At(1) == c.AtT(1))
	// Output: {230 159 0 255} true true
}

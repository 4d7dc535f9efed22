// Package heatmap is the browser-free half of the haeols attention heatmap
// renderer: everything the ebiten program in wasm/heatmap draws is computed
// here, in plain Go, so that it is tested natively.
//
// It maps attention probabilities to colours on a log10 scale clipped at a
// floor (Scale, Colors), max-pools a Rows x Cols map down to the pixels of a
// panel so that a single spike never disappears (Pool), keeps the zoom and
// pan state (View), lays out the original | compressed | difference panels
// with their token-class strips and a colour legend (NewLayout), renders the
// panels into RGBA pixels (Renderer) and answers which query row and key
// column a pixel shows (Layout.Hit).
//
// The package imports neither core nor ebiten, so that the heatmap wasm stays
// small; Class mirrors core.Class (a test checks that they agree).
package heatmap

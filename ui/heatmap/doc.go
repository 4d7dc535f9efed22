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
// It is the one renderer of every heatmap haeols draws: the browser's
// (wasm/heatmap shows its RGBA buffer with ebiten) and the maps of haeols
// heatmap's PNG (package figure frames them with a title, axes and a
// legend). One colormap (Colormap) on one scale (DefaultFloor to 1), one
// class palette (ClassColor, Okabe-Ito, with vermillion kept for the
// needles), one class legend (Legend) and one pooling rule: a pixel shows
// the largest value of the cells it covers, a strip pixel the rarest class
// (StripColumn).
//
// The package imports neither core nor ebiten, so that the heatmap wasm stays
// small; Class mirrors core.Class (a test checks that they agree).
package heatmap

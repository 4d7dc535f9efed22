package heatmap

import (
	"image"
	"image/color"
	"image/draw"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// TextFont is the canvas font at scale s: basicfont's 7x13 bitmap face
// (ASCII), each font pixel drawn as an s x s block.
func TextFont(s int) Font {
	s = max(s, 1)
	return Font{W: 7 * s, H: 13 * s}
}

// DrawLabels draws the labels into img in colour c with the bitmap font
// scaled by the integer s (TextFont(s) must be the font the layout used).
// Glyphs outside ASCII are drawn as basicfont's replacement box.
func DrawLabels(img *image.RGBA, labels []Label, s int, c color.RGBA) {
	s = max(s, 1)
	face := basicfont.Face7x13
	for _, l := range labels {
		if l.Text == "" {
			continue
		}
		w := 7 * len(l.Text)
		mask := image.NewAlpha(image.Rect(0, 0, w, 13))
		d := font.Drawer{Dst: mask, Src: image.Opaque, Face: face, Dot: fixed.P(0, face.Ascent)}
		d.DrawString(l.Text)
		if s == 1 {
			draw.DrawMask(img, image.Rect(l.X, l.Y, l.X+w, l.Y+13), image.NewUniform(c), image.Point{}, mask, image.Point{}, draw.Over)
			continue
		}
		b := img.Bounds()
		for y := 0; y < 13; y++ {
			for x := 0; x < w; x++ {
				if mask.AlphaAt(x, y).A < 128 {
					continue
				}
				for dy := 0; dy < s; dy++ {
					py := l.Y + y*s + dy
					if py < b.Min.Y || py >= b.Max.Y {
						continue
					}
					for dx := 0; dx < s; dx++ {
						if px := l.X + x*s + dx; px >= b.Min.X && px < b.Max.X {
							img.SetRGBA(px, py, c)
						}
					}
				}
			}
		}
	}
}

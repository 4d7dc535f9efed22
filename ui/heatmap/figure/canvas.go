package figure

import (
	"image"
	"image/color"
	"image/draw"
	"math"

	xfont "golang.org/x/image/font"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/font/liberation"
)

// canvas draws on an RGBA image: rectangles, lines, triangles and
// anti-aliased text in Liberation Sans (gonum/plot's fonts).
type canvas struct {
	img   *image.RGBA
	fonts *font.Cache
	faces map[faceKey]xfont.Face
}

type faceKey struct {
	size float64
	bold bool
}

// newCanvas draws on img.
func newCanvas(img *image.RGBA) *canvas {
	return &canvas{img: img, fonts: font.NewCache(liberation.Collection()), faces: map[faceKey]xfont.Face{}}
}

// face returns the Liberation Sans face of that pixel size.
func (c *canvas) face(size float64, bold bool) xfont.Face {
	k := faceKey{size, bold}
	if f, ok := c.faces[k]; ok {
		return f
	}
	fnt := font.Font{Typeface: "Liberation", Variant: "Sans"}
	if bold {
		fnt.Weight = xfont.WeightBold
	}
	ff := c.fonts.Lookup(fnt, font.Length(size))
	f := ff.FontFace(72) // 72 dpi: 1 pt = 1 px
	c.faces[k] = f
	return f
}

// fill paints the rectangle.
func (c *canvas) fill(r image.Rectangle, col color.Color) {
	draw.Draw(c.img, r, image.NewUniform(col), image.Point{}, draw.Src)
}

// frame draws a one-pixel outline just outside r.
func (c *canvas) frame(r image.Rectangle, col color.Color) {
	r = r.Inset(-1)
	c.fill(image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+1), col)
	c.fill(image.Rect(r.Min.X, r.Max.Y-1, r.Max.X, r.Max.Y), col)
	c.fill(image.Rect(r.Min.X, r.Min.Y, r.Min.X+1, r.Max.Y), col)
	c.fill(image.Rect(r.Max.X-1, r.Min.Y, r.Max.X, r.Max.Y), col)
}

// triangle fills an isosceles triangle with its tip at (x, y), pointing up
// (dir < 0: the base is below the tip) or down (dir > 0), or right (dir ==
// 0: tip at (x, y), base to the left).
func (c *canvas) triangle(x, y, size, dir int, col color.Color) {
	for i := 0; i <= size; i++ {
		switch {
		case dir == 0:
			c.fill(image.Rect(x-i, y-i/2, x-i+1, y+i/2+1), col)
		case dir < 0:
			c.fill(image.Rect(x-i/2, y+i, x+i/2+1, y+i+1), col)
		default:
			c.fill(image.Rect(x-i/2, y-i, x+i/2+1, y-i+1), col)
		}
	}
}

// Text anchors.
const (
	alignLeft = iota
	alignCenter
	alignRight
)

// textWidth is the advance of s in pixels.
func (c *canvas) textWidth(s string, size float64, bold bool) int {
	return xfont.MeasureString(c.face(size, bold), s).Ceil()
}

// text draws s with its baseline at y, anchored at x.
func (c *canvas) text(x, y int, s string, size float64, bold bool, align int, col color.Color) {
	f := c.face(size, bold)
	switch align {
	case alignCenter:
		x -= c.textWidth(s, size, bold) / 2
	case alignRight:
		x -= c.textWidth(s, size, bold)
	}
	d := xfont.Drawer{Dst: c.img, Src: image.NewUniform(col), Face: f, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// textUp draws s rotated 90 degrees counter-clockwise (reading bottom to
// top), centred on (cx, cy).
func (c *canvas) textUp(cx, cy int, s string, size float64, bold bool, col color.Color) {
	w := c.textWidth(s, size, bold) + 2
	m := c.face(size, bold).Metrics()
	asc, desc := m.Ascent.Ceil(), m.Descent.Ceil()
	h := asc + desc
	tmp := image.NewRGBA(image.Rect(0, 0, w, h))
	d := xfont.Drawer{Dst: tmp, Src: image.NewUniform(col), Face: c.face(size, bold), Dot: fixed.P(1, asc)}
	d.DrawString(s)
	// (x, y) in tmp goes to (x0 + y, y0 + w-1-x).
	x0, y0 := cx-h/2, cy-w/2
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			px := tmp.RGBAAt(x, y)
			if px.A == 0 {
				continue
			}
			dx, dy := x0+y, y0+w-1-x
			if !(image.Point{dx, dy}.In(c.img.Bounds())) {
				continue
			}
			// Blend the premultiplied text pixel over the canvas.
			bg := c.img.RGBAAt(dx, dy)
			a := float64(px.A) / 255
			blend := func(f, b uint8) uint8 { return uint8(math.Round(float64(f) + float64(b)*(1-a))) }
			c.img.SetRGBA(dx, dy, color.RGBA{blend(px.R, bg.R), blend(px.G, bg.G), blend(px.B, bg.B), 255})
		}
	}
}

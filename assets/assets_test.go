package assets

import (
	"image/color"
	"math"
	"strings"
	"testing"
)

// lightness returns CIE L* (D65) of an sRGB colour with components in [0, 1].
func lightness(r, g, b float64) float64 {
	lin := func(c float64) float64 {
		if c <= 0.04045 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	y := 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
	if y > 216.0/24389 {
		return 116*math.Cbrt(y) - 16
	}
	return y * 24389 / 27
}

func viridis(t *testing.T) *Map {
	t.Helper()
	m, err := Colormap("viridis")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestViridisTable(t *testing.T) {
	m := viridis(t)
	if len(m.RGB) != 256 {
		t.Fatalf("viridis has %d entries, want 256", len(m.RGB))
	}
	// Spot checks against matplotlib's _viridis_data.
	for _, c := range []struct {
		i   int
		rgb [3]float64
	}{
		{0, [3]float64{0.267004, 0.004874, 0.329415}},
		{128, [3]float64{0.127568, 0.566949, 0.550556}},
		{255, [3]float64{0.993248, 0.906157, 0.143936}},
	} {
		if m.RGB[c.i] != c.rgb {
			t.Errorf("entry %d = %v, want %v", c.i, m.RGB[c.i], c.rgb)
		}
	}
	// Lightness strictly increases, in small even steps: a dropped,
	// duplicated or mistyped row would break this.
	prev := -1.0
	for i, c := range m.RGB {
		l := lightness(c[0], c[1], c[2])
		if i > 0 {
			step := l - prev
			if step < 0.2 || step > 0.45 {
				t.Errorf("lightness step %d->%d = %.3f, want in [0.2, 0.45]", i-1, i, step)
			}
		}
		prev = l
	}
}

func TestAt(t *testing.T) {
	m := viridis(t)
	lo := color.RGBA{68, 1, 84, 255}
	hi := color.RGBA{253, 231, 37, 255}
	mid := func() color.RGBA { // halfway between entries 127 and 128
		r, g, b := m.AtFloat(0.5)
		a, c := m.RGB[127], m.RGB[128]
		for k, v := range []float64{r, g, b} {
			if want := (a[k] + c[k]) / 2; math.Abs(v-want) > 1e-12 {
				t.Errorf("AtFloat(0.5)[%d] = %v, want %v", k, v, want)
			}
		}
		return color.RGBA{to8(r), to8(g), to8(b), 255}
	}()
	for _, c := range []struct {
		name string
		x    float64
		want color.RGBA
	}{
		{"zero", 0, lo},
		{"one", 1, hi},
		{"below", -3, lo},
		{"above", 7, hi},
		{"-inf", math.Inf(-1), lo},
		{"+inf", math.Inf(1), hi},
		{"nan", math.NaN(), lo},
		{"half", 0.5, mid},
	} {
		if got := m.At(c.x); got != c.want {
			t.Errorf("%s: At(%v) = %v, want %v", c.name, c.x, got, c.want)
		}
	}
	// At is monotone in lightness along a fine grid too.
	prev := -1.0
	for i := 0; i <= 1000; i++ {
		r, g, b := m.AtFloat(float64(i) / 1000)
		l := lightness(r, g, b)
		if l < prev {
			t.Fatalf("lightness decreases at x=%v", float64(i)/1000)
		}
		prev = l
	}
}

func TestColormapErrors(t *testing.T) {
	for _, c := range []struct {
		name, want string
	}{
		{"jet", "unknown colormap \"jet\""},
		{"../assets", "unknown colormap"},
		{"", "unknown colormap"},
	} {
		_, err := Colormap(c.name)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "viridis") {
			t.Errorf("Colormap(%q) error = %v, want one containing %q and listing viridis", c.name, err, c.want)
		}
	}
}

func TestParseColormap(t *testing.T) {
	for _, c := range []struct {
		name, data, want string
	}{
		{"ok", "# c\n0 0 0\n\n1 1 1\n", ""},
		{"fields", "0 0\n1 1 1\n", "line 1: want 3 numbers"},
		{"number", "0 0 x\n1 1 1\n", "line 1:"},
		{"range", "0 0 0\n1 1.5 1\n", "line 2: component 1.5 outside"},
		{"nan", "0 0 NaN\n1 1 1\n", "outside [0, 1]"},
		{"short", "0 0 0\n", "1 entries"},
	} {
		m, err := parseColormap(c.name, []byte(c.data))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && len(m.RGB) != 2:
			t.Errorf("%s: %d entries, want 2", c.name, len(m.RGB))
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

func TestColormapNames(t *testing.T) {
	if got := strings.Join(ColormapNames(), ","); !strings.Contains(got, "viridis") {
		t.Errorf("ColormapNames() = %q, want viridis listed", got)
	}
}

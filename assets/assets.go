// Package assets holds the static data shared by the haeols renderers (the
// command-line tool and the browser): perceptually uniform colormaps,
// embedded from assets/colormaps with go:embed.
//
// The package uses only the standard library so that it builds for every
// target, including GOOS=js GOARCH=wasm.
package assets

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed colormaps/*.txt
var colormapFiles embed.FS

// Map is a colormap: a table of sRGB colours sampled at equal steps over
// [0, 1], read with linear interpolation between neighbouring entries.
type Map struct {
	// Name is the colormap's name, e.g. "viridis".
	Name string
	// RGB holds the entries, red, green and blue in [0, 1].
	RGB [][3]float64
}

var (
	cacheMu sync.Mutex
	cache   = map[string]*Map{}
)

// ColormapNames lists the embedded colormaps, sorted.
func ColormapNames() []string {
	ents, err := colormapFiles.ReadDir("colormaps")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if n, ok := strings.CutSuffix(e.Name(), ".txt"); ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// Colormap returns the embedded colormap of that name ("viridis"). The
// returned Map is shared: do not modify it.
func Colormap(name string) (*Map, error) {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if m, ok := cache[name]; ok {
		return m, nil
	}
	file := "colormaps/" + name + ".txt"
	data, err := colormapFiles.ReadFile(file)
	if err != nil || strings.ContainsAny(name, "/.") {
		return nil, fmt.Errorf("assets: unknown colormap %q (known: %s)", name, strings.Join(ColormapNames(), ", "))
	}
	m, err := parseColormap(name, data)
	if err != nil {
		return nil, fmt.Errorf("assets: %s: %w", file, err)
	}
	cache[name] = m
	return m, nil
}

// parseColormap reads lines "r g b" with components in [0, 1]; blank lines
// and lines starting with # are ignored.
func parseColormap(name string, data []byte) (*Map, error) {
	m := &Map{Name: name}
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		f := strings.Fields(t)
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want 3 numbers, got %d", line, len(f))
		}
		var c [3]float64
		for i, s := range f {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %w", line, err)
			}
			if !(v >= 0 && v <= 1) {
				return nil, fmt.Errorf("line %d: component %v outside [0, 1]", line, v)
			}
			c[i] = v
		}
		m.RGB = append(m.RGB, c)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(m.RGB) < 2 {
		return nil, fmt.Errorf("%d entries, want at least 2", len(m.RGB))
	}
	return m, nil
}

// At returns the colour at x in [0, 1], interpolating linearly between the
// two nearest entries. x is clamped to [0, 1]; NaN gives the colour at 0.
func (m *Map) At(x float64) color.RGBA {
	r, g, b := m.AtFloat(x)
	return color.RGBA{R: to8(r), G: to8(g), B: to8(b), A: 255}
}

// AtFloat is At with the components as floats in [0, 1].
func (m *Map) AtFloat(x float64) (r, g, b float64) {
	if !(x > 0) { // also NaN
		x = 0
	}
	x = min(x, 1)
	n := len(m.RGB) - 1
	p := x * float64(n)
	i := min(int(p), n-1)
	f := p - float64(i)
	a, c := m.RGB[i], m.RGB[i+1]
	return a[0] + f*(c[0]-a[0]), a[1] + f*(c[1]-a[1]), a[2] + f*(c[2]-a[2])
}

func to8(v float64) uint8 { return uint8(math.Round(min(max(v, 0), 1) * 255)) }

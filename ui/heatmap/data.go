package heatmap

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/haeols/haeols/core/attnmap"
	"github.com/haeols/haeols/wire"
)

// Class is what a compression method did with one prefix token. The values
// are those of core.Class (the heatmap does not import core, to stay small).
type Class uint8

// Token classes, numbered as core.Class.
const (
	Evicted Class = iota
	Sink
	Recent
	Anchor
	Summarized
	Approx
	numClasses
)

var classNames = [...]string{"evicted", "sink", "recent", "anchor", "summarized", "approx"}

// String returns the class name as core.Class does.
func (c Class) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", int(c))
}

// Data is one decoded wire.Maps message: the original and compressed
// attention maps (Rows x Cols, row-major: the Calib calibration queries, then
// the probe queries; columns are prefix positions), their absolute
// difference, and per column the token class and summary segment.
type Data struct {
	Maps       wire.Maps
	Orig, Comp []float32
	// Diff is |Comp - Orig|, cell by cell.
	Diff []float32
	// NaN is false when no cell of Orig, Comp or Diff is NaN.
	NaN bool
	// Classes and Segments have Cols entries, or are nil when the message
	// carried none.
	Classes  []Class
	Segments []int32
	// needle marks the needle columns.
	needle []bool
	// Key names the head's unchanging part (original map, token texts,
	// needles) for a message that came with a key (see wire); "" when
	// it came without one.
	Key string
	// ids name the values of each panel (by PanelKind): equal ids, equal
	// values (see ShareOrig), so a renderer may reuse what it painted.
	ids [3]uint64
}

// lastID numbers panels' values.
var lastID atomic.Uint64

// PanelID identifies the values of panel k: two Data whose panel k has
// the same id hold the same values.
func (d *Data) PanelID(k PanelKind) uint64 { return d.ids[k] }

// ShareOrig makes d use prev's original map when the two are equal, bit
// for bit (a new ratio of the same head leaves the original attention
// alone): d.Orig becomes prev.Orig and keeps its panel id, so what was
// painted of it can be reused. It reports whether they were equal.
func (d *Data) ShareOrig(prev *Data) bool {
	if prev == nil || prev == d || len(prev.Orig) != len(d.Orig) || prev.Maps.Rows != d.Maps.Rows || prev.Maps.Cols != d.Maps.Cols {
		return false
	}
	if len(d.Orig) > 0 && &d.Orig[0] == &prev.Orig[0] {
		d.ids[PanelOrig] = prev.ids[PanelOrig]
		return true
	}
	for i, x := range d.Orig {
		if math.Float32bits(x) != math.Float32bits(prev.Orig[i]) {
			return false
		}
	}
	d.Orig, d.ids[PanelOrig] = prev.Orig, prev.ids[PanelOrig]
	return true
}

// Decode checks m and its buffers ("orig" and "comp": Rows x Cols
// little-endian float32; "classes": Cols uint8, optional; "segments": Cols
// little-endian int32, optional) and returns the decoded Data. Errors name
// the offending field or buffer.
func Decode(m wire.Maps, orig, comp, classes, segments []byte) (*Data, error) {
	if err := checkShape(m); err != nil {
		return nil, err
	}
	n := m.Rows * m.Cols
	o, err := floats("orig", orig, n)
	if err != nil {
		return nil, err
	}
	c, err := floats("comp", comp, n)
	if err != nil {
		return nil, err
	}
	return NewData(m, o, c, nil, classes, segments)
}

// DecodeFactored checks the buffers of a maps message whose compressed map
// comes factored (m.Factored; see package attnmap and wire.Maps) and
// returns the factored map, ready to Expand with the original map. Errors
// name the offending field or buffer.
func DecodeFactored(m wire.Maps, scale, inv, syn, share, source []byte) (*attnmap.Factored, error) {
	if err := checkShape(m); err != nil {
		return nil, err
	}
	if m.Syn < 0 || m.Syn > maxCells/m.Rows {
		return nil, fmt.Errorf("heatmap: maps message: syn %d: want 0 to %d synthetic tokens", m.Syn, maxCells/m.Rows)
	}
	f := &attnmap.Factored{Rows: m.Rows, Cols: m.Cols, C: m.Syn}
	var err error
	for _, b := range []struct {
		name string
		raw  []byte
		n    int
		dst  *[]float32
	}{{"scale", scale, m.Rows, &f.Scale}, {"inv", inv, m.Rows, &f.Inv}, {"syn", syn, m.Rows * m.Syn, &f.Syn}, {"share", share, m.Cols, &f.Share}} {
		if *b.dst, err = floatsN(b.name, b.raw, b.n); err != nil {
			return nil, err
		}
	}
	if len(source) != 4*m.Cols {
		return nil, fmt.Errorf("heatmap: buffer \"source\": %d bytes, want 4 x cols = %d", len(source), 4*m.Cols)
	}
	f.Source = make([]int32, m.Cols)
	for j := range f.Source {
		f.Source[j] = int32(binary.LittleEndian.Uint32(source[4*j:]))
	}
	if err := f.Check(); err != nil {
		return nil, fmt.Errorf("heatmap: maps message: %w", err)
	}
	return f, nil
}

// NewData is Decode for maps already in float32: it checks m and the
// buffers, takes orig and comp (Rows x Cols each) as they are, and computes
// Diff into diff when it has room (else into a new slice), so that a
// caller decoding a stream of messages can reuse its buffers.
func NewData(m wire.Maps, orig, comp, diff []float32, classes, segments []byte) (*Data, error) {
	if err := checkShape(m); err != nil {
		return nil, err
	}
	n := m.Rows * m.Cols
	for _, b := range []struct {
		name string
		f    []float32
	}{{"orig", orig}, {"comp", comp}} {
		if len(b.f) != n {
			return nil, fmt.Errorf("heatmap: buffer %q: %d values, want rows x cols = %d", b.name, len(b.f), n)
		}
	}
	d := &Data{Maps: m, Orig: orig, Comp: comp}
	for k := range d.ids {
		d.ids[k] = lastID.Add(1)
	}
	if cap(diff) < n {
		diff = make([]float32, n)
	}
	d.Diff = diff[:n]
	dd, oo := d.Diff[:len(comp)], orig[:len(comp)]
	var nan uint32
	for i, x := range comp {
		// |comp - orig| by clearing the sign bit; NaN when either is. A
		// NaN's bits (sign cleared) are above 0x7f800000, the only ones
		// that carry into bit 31 here (a comparison per cell costs a
		// branch in Go's wasm code).
		b := math.Float32bits(x-oo[i]) &^ (1 << 31)
		dd[i] = math.Float32frombits(b)
		nan |= b + 0x007fffff
	}
	d.NaN = nan&(1<<31) != 0
	if len(classes) > 0 {
		if len(classes) != m.Cols {
			return nil, fmt.Errorf("heatmap: buffer \"classes\": %d bytes, want cols = %d", len(classes), m.Cols)
		}
		d.Classes = make([]Class, m.Cols)
		for i, c := range classes {
			if Class(c) >= numClasses {
				return nil, fmt.Errorf("heatmap: buffer \"classes\": entry %d is %d, not a token class", i, c)
			}
			d.Classes[i] = Class(c)
		}
	}
	if len(segments) > 0 {
		if len(segments) != 4*m.Cols {
			return nil, fmt.Errorf("heatmap: buffer \"segments\": %d bytes, want 4 x cols = %d", len(segments), 4*m.Cols)
		}
		d.Segments = make([]int32, m.Cols)
		for i := range d.Segments {
			d.Segments[i] = int32(binary.LittleEndian.Uint32(segments[4*i:]))
		}
	}
	d.needle = make([]bool, m.Cols)
	for _, p := range m.Needles {
		if p < 0 || p >= m.Cols {
			return nil, fmt.Errorf("heatmap: maps message: needle %d outside [0, cols %d)", p, m.Cols)
		}
		d.needle[p] = true
	}
	return d, nil
}

// checkShape checks the shape fields and the panel of a maps message.
func checkShape(m wire.Maps) error {
	if m.Rows <= 0 || m.Cols <= 0 {
		return fmt.Errorf("heatmap: maps message: rows %d, cols %d: want both > 0", m.Rows, m.Cols)
	}
	if m.Calib < 0 || m.Calib > m.Rows {
		return fmt.Errorf("heatmap: maps message: calib %d outside [0, rows %d]", m.Calib, m.Rows)
	}
	if m.Rows > maxCells/m.Cols {
		return fmt.Errorf("heatmap: maps message: rows %d x cols %d: more than %d cells", m.Rows, m.Cols, maxCells)
	}
	if _, err := PanelsFor(m.Panel); err != nil {
		return err
	}
	return nil
}

// maxCells bounds a map (rows x cols), so that a lying message cannot ask
// for absurd allocations: 64M cells, far beyond any head the app shows.
const maxCells = 1 << 26

func floats(name string, b []byte, n int) ([]float32, error) {
	if len(b) != 4*n {
		return nil, fmt.Errorf("heatmap: buffer %q: %d bytes, want 4 x rows x cols = %d", name, len(b), 4*n)
	}
	return floatsN(name, b, n)
}

// floatsN reads n little-endian float32s from the buffer b named name.
func floatsN(name string, b []byte, n int) ([]float32, error) {
	if len(b) != 4*n {
		return nil, fmt.Errorf("heatmap: buffer %q: %d bytes, want %d", name, len(b), 4*n)
	}
	f := make([]float32, n)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return f, nil
}

// Panel returns the values of a panel's map.
func (d *Data) Panel(k PanelKind) []float32 {
	switch k {
	case PanelComp:
		return d.Comp
	case PanelDiff:
		return d.Diff
	}
	return d.Orig
}

// Needle reports whether column c is a needle token.
func (d *Data) Needle(c int) bool { return c >= 0 && c < len(d.needle) && d.needle[c] }

// RowLabel names query row r: "calib i" for the calibration queries, "probe
// i" for the probe queries, with the probe's token text when the message
// carries it (TokenText holds the Cols prefix tokens, then one per probe).
func (d *Data) RowLabel(r int) string {
	if r < d.Maps.Calib {
		return fmt.Sprintf("calib %d", r)
	}
	i := r - d.Maps.Calib
	s := fmt.Sprintf("probe %d", i)
	if t, ok := d.token(d.Maps.Cols + i); ok {
		s += " " + t
	}
	return s
}

// ColLabel names key column c: "key c" and its token text when present.
func (d *Data) ColLabel(c int) string {
	s := fmt.Sprintf("key %d", c)
	if t, ok := d.token(c); ok {
		s += " " + t
	}
	return s
}

// token returns the quoted (ASCII, escaped) display text of position i,
// shortened to 16 characters, if any.
func (d *Data) token(i int) (string, bool) {
	if i < 0 || i >= len(d.Maps.TokenText) {
		return "", false
	}
	t := d.Maps.TokenText[i]
	r := []rune(t)
	if len(r) > 16 {
		t = string(r[:14]) + ".."
	}
	// ASCII only: the canvas font is a bitmap font without other glyphs.
	return fmt.Sprintf("%+q", t), true
}

// Class returns column c's class and segment (-1 when not summarized or
// unknown); ok is false when the message carried no classes.
func (d *Data) Class(c int) (cl Class, seg int32, ok bool) {
	if d.Classes == nil || c < 0 || c >= len(d.Classes) {
		return 0, -1, false
	}
	seg = -1
	if d.Segments != nil {
		seg = d.Segments[c]
	}
	return d.Classes[c], seg, true
}

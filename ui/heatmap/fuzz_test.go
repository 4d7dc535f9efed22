package heatmap

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/haeols/haeols/wire"
)

// FuzzDecode feeds Decode arbitrary shapes and buffers: it must never
// panic, and a message it accepts must give maps of rows x cols values
// with per-column classes and segments when present.
func FuzzDecode(f *testing.F) {
	f.Add(2, 3, 1, "all", make([]byte, 24), make([]byte, 24), []byte{0, 1, 2}, make([]byte, 12))
	f.Add(1, 1, 0, "diff", []byte{0, 0, 128, 63}, []byte{0, 0, 0, 0}, []byte{}, []byte{})
	f.Add(0, 5, 0, "all", []byte{}, []byte{}, []byte{}, []byte{})
	f.Add(1<<30, 1<<30, 0, "orig", []byte{1}, []byte{2}, []byte{9}, []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, rows, cols, calib int, panel string, orig, comp, classes, segments []byte) {
		m := wire.Maps{Rows: rows, Cols: cols, Calib: calib, Panel: panel}
		d, err := Decode(m, orig, comp, classes, segments)
		if err != nil {
			return
		}
		n := rows * cols
		if len(d.Orig) != n || len(d.Comp) != n || len(d.Diff) != n {
			t.Fatalf("accepted %dx%d with %d/%d/%d values", rows, cols, len(d.Orig), len(d.Comp), len(d.Diff))
		}
		if d.Classes != nil && len(d.Classes) != cols || d.Segments != nil && len(d.Segments) != cols {
			t.Fatalf("accepted %d classes and %d segments for %d columns", len(d.Classes), len(d.Segments), cols)
		}
	})
}

// FuzzDecodeFactored feeds DecodeFactored arbitrary shapes and buffers: it
// must never panic, and a map it accepts must expand into rows x cols
// values without panicking.
func FuzzDecodeFactored(f *testing.F) {
	f.Add(1, 3, 1, f32(0.5), f32(0.25), f32(2), f32(0, 1, 0), i32(-1, 0, -2))
	f.Add(2, 2, 0, f32(1, -1), f32(0, 0), []byte{}, f32(0, 0), i32(-1, -1))
	f.Add(1, 2, 1, f32(1), f32(1), f32(1), f32(1, 1), i32(1, -3))
	f.Add(1<<20, 1<<20, 1<<40, []byte{1}, []byte{}, []byte{}, []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, rows, cols, syn int, scale, inv, synB, share, source []byte) {
		m := wire.Maps{Rows: rows, Cols: cols, Panel: "all", Factored: true, Syn: syn}
		fm, err := DecodeFactored(m, scale, inv, synB, share, source)
		if err != nil {
			return
		}
		orig := make([]float32, rows*cols)
		fm.Expand(make([]float32, rows*cols), orig)
	})
}

// f32 is xs as little-endian float32 bytes, as the worker sends them.
func f32(xs ...float32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// i32 is xs as little-endian int32 bytes.
func i32(xs ...int32) []byte {
	b := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

package heatmap

import (
	"testing"

	"github.com/haeols/haeols/ui/proto"
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
		m := proto.Maps{Rows: rows, Cols: cols, Calib: calib, Panel: panel}
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

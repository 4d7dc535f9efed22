package wire

import (
	"math"
	"reflect"
	"testing"
)

// object is a JavaScript object for the tests: Set stores what a js
// package would convert (string, int, float64, bool).
type object map[string]any

func (o object) Set(key string, v any) { o[key] = v }

func (o object) String(key string) (string, bool) { s, ok := o[key].(string); return s, ok }

func (o object) Number(key string) (float64, bool) {
	switch x := o[key].(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func (o object) Bool(key string) bool {
	switch x := o[key].(type) {
	case bool:
		return x
	case string:
		return x != ""
	case int:
		return x != 0
	case float64:
		return x != 0
	}
	return false
}

// TestEnvelope: each kind of message's envelope reads back as written,
// with only its own fields set; fields of the wrong type read as zero.
func TestEnvelope(t *testing.T) {
	tests := []struct {
		name   string
		env    Envelope
		fields []string
	}{
		{"relayed maps", Envelope{Relay: RelayHeatmap, Key: "1/0/2", View: "1/0/2/hae-ols/0.25/0.25/1/all@0.3", Seq: 7, PostedAt: 1.5e12},
			[]string{"relay", "key", "view", "seq", "posted_at"}},
		{"ladder maps, passed on", Envelope{Relay: RelayHeatmap, Key: "k", View: "v@0.31", Ladder: true, PostedAt: 1, RelayedAt: 2},
			[]string{"relay", "key", "view", "ladder", "posted_at", "relayed_at"}},
		{"show", Envelope{Show: "v@0.31", Seq: 9}, []string{"show", "seq"}},
		{"shown", Envelope{View: "v@0.31", Seq: 9, Shown: true}, []string{"view", "seq", "shown"}},
		{"empty", Envelope{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := object{}
			tc.env.Write(o)
			if got := ReadEnvelope(o); got != tc.env {
				t.Errorf("read back %+v, want %+v", got, tc.env)
			}
			var keys []string
			for _, k := range tc.fields {
				if _, ok := o[k]; ok {
					keys = append(keys, k)
				}
			}
			if len(o) != len(tc.fields) || !reflect.DeepEqual(keys, tc.fields) {
				t.Errorf("fields %v, want %v", o, tc.fields)
			}
		})
	}
	bad := object{"seq": "7", "view": 3, "relay": true}
	if got := ReadEnvelope(bad); got != (Envelope{}) {
		t.Errorf("fields of the wrong type read as %+v, want zero", got)
	}
}

// TestHeatmapMessages: the heatmap page's messages read back as written.
func TestHeatmapMessages(t *testing.T) {
	d := HeatmapDrawn{Rows: 2, Cols: 3, Ratio: 0.31, Seq: 9, DrawnAt: 1, ArrivedAt: 2, PostedAt: 3, RelayedAt: 4,
		DecodeMs: 5, WaitMs: 6, PaintMs: 7, PixelsMs: 8, Ladder: true, Prepared: true}
	o := object{}
	d.Write(o)
	if HeatmapType(o) != TypeHeatmapDrawn || ReadHeatmapDrawn(o) != d {
		t.Errorf("drawn: %v reads back as %+v", o, ReadHeatmapDrawn(o))
	}
	for _, h := range []HeatmapHover{{Panel: "comp", Row: 1, Col: 2, Value: 0.5}, {Row: -1, Col: -1, Value: math.NaN()}} {
		o := object{}
		h.Write(o)
		got := ReadHeatmapHover(o)
		if HeatmapType(o) != TypeHeatmapHover || got.Panel != h.Panel || got.Row != h.Row || got.Col != h.Col ||
			math.Float64bits(got.Value) != math.Float64bits(h.Value) && !(math.IsNaN(got.Value) && math.IsNaN(h.Value)) {
			t.Errorf("hover: %v reads back as %+v", o, got)
		}
	}
	for _, e := range []HeatmapError{{Error: "bad"}, {Error: "gone", Missing: "1/0/2"}} {
		o := object{}
		e.Write(o)
		if HeatmapType(o) != TypeHeatmapError || ReadHeatmapError(o) != e {
			t.Errorf("error: %v reads back as %+v", o, ReadHeatmapError(o))
		}
	}
	o = object{}
	HeatmapReady{}.Write(o)
	HeatmapView{Rows: 4, Cols: 5, R0: 1, RSpan: 2, C0: 0, CSpan: 5}.Write(object{})
	if HeatmapType(o) != TypeHeatmapReady || len(o) != 1 {
		t.Errorf("ready: %v", o)
	}
}

package wire

import (
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
		{"maps ahead, passed on", Envelope{Relay: RelayHeatmap, Key: "k", View: "v@0.31", Ahead: true, PostedAt: 1, RelayedAt: 2},
			[]string{"relay", "key", "view", "ahead", "posted_at", "relayed_at"}},
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

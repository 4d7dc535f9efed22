package state

import (
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/haeols/haeols/wire"
)

// FuzzParseQuery: any link gives a valid view without panicking, and that
// view's own link reads back as the same view with nothing to repair.
func FuzzParseQuery(f *testing.F) {
	for _, seed := range []string{
		"", "?sample=default&layer=1&head=2&ratio=0.3", "ratio=NaN", "ratio=1e309&tau=-1",
		"sample=file:x.safetensors", "methods=,,hae-ols,../x,topk&method=topk", "%zz", "layer=-1&head=99999999999999999999",
		"sample=samples/needle.safetensors&panel=diff&lambda=0.5&phi=0&tau=1",
		"sample=models/kjv3m.bin&prompt=In%20the%20beginning&task=passkey&depth=0.3", "prompt=%ff%00x&task=copy",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		s, _ := ParseQuery(raw)
		for name, v := range map[string]float64{"ratio": s.Ratio, "lambda": s.Lambda, "phi": s.Phi, "tau": s.Tau} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%q: %s = %v", raw, name, v)
			}
		}
		p := s.Params()
		for _, sl := range wire.Sliders {
			if x := *sl.Of(&p); x < sl.Min || x > sl.Max {
				t.Fatalf("%q: %s %v out of range in view %+v", raw, sl.Name, x, s)
			}
		}
		if s.Layer < 0 || s.Head < 0 {
			t.Fatalf("%q: out-of-range view %+v", raw, s)
		}
		if !s.Compared(s.Method) || strings.HasPrefix(s.Sample, FilePrefix) {
			t.Fatalf("%q: inconsistent view %+v", raw, s)
		}
		back, msgs := ParseQuery(s.Encode())
		if len(msgs) != 0 || !reflect.DeepEqual(back, s) {
			t.Fatalf("%q: view %+v encodes to %q, which reads back as %+v (%v)", raw, s, s.Encode(), back, msgs)
		}
	})
}

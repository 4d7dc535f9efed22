package result

import (
	"encoding/json"
	"math"
	"testing"
)

// TestNumJSON: finite numbers round-trip, NaN and infinities are null and
// read back as NaN.
func TestNumJSON(t *testing.T) {
	for _, x := range []float64{0, 1.5, -2, math.NaN(), math.Inf(1)} {
		b, err := json.Marshal(Num(x))
		if err != nil {
			t.Fatal(err)
		}
		var back Num
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if finite := !math.IsNaN(x) && !math.IsInf(x, 0); finite && float64(back) != x || !finite && !math.IsNaN(float64(back)) {
			t.Errorf("%v -> %s -> %v", x, b, back)
		}
	}
}

// TestMetricsJSON: Metrics write cos and needle_err last, null when NaN,
// and read back to the bit; classes by name.
func TestMetricsJSON(t *testing.T) {
	m := Metrics{Method: "topk", Metric: MetricLostMass, Layer: 1, Head: 2, Asked: 0.3, Ratio: 0.29, Err: 0.1, ErrMax: 0.5, ErrP95: 0.4,
		ErrCal: 0.05, Cos: math.NaN(), NeedleErr: math.NaN(), Needles: []NeedleStatus{{Pos: 7, Class: Summarized}}, Profile: []float64{0.1, 0.2}, RowEntropy: 2.5}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"method":"topk","metric":"lost-mass","layer":1,"head":2,"asked":0.3,"ratio":0.29,"err":0.1,"err_max":0.5,"err_p95":0.4,"err_cal":0.05,` +
		`"needles":[{"pos":7,"class":"summarized"}],"profile":[0.1,0.2],"row_entropy":2.5,"cos":null,"needle_err":null}`
	if string(b) != want {
		t.Errorf("JSON\n%s\nwant\n%s", b, want)
	}
	var back Metrics
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(back.Cos) || !math.IsNaN(back.NeedleErr) || back.Err != m.Err || back.Needles[0] != m.Needles[0] || back.Profile[1] != m.Profile[1] || back.RowEntropy != m.RowEntropy {
		t.Errorf("read back %+v", back)
	}
	m.Cos, m.NeedleErr = 0.9, 0.2
	b, _ = json.Marshal(m)
	if err := json.Unmarshal(b, &back); err != nil || back.Cos != 0.9 || back.NeedleErr != 0.2 {
		t.Errorf("%s read back as cos %v, needle_err %v (%v)", b, back.Cos, back.NeedleErr, err)
	}
	var c Class
	if err := c.UnmarshalText([]byte("warp")); err == nil {
		t.Error("an unknown class name was read")
	}
}

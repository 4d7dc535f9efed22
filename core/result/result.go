// Package result holds what the core's compression gives as plain data: a
// compressed cache's Metrics on one query head (with each needle token's
// Class), the Stages behind the cache, and Num, the JSON number that is
// null for NaN. The core names them (core.Metrics is result.Metrics); the
// package imports nothing of the core, so that the web app's messages
// (package wire), which carry them, do not link it.
package result

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// What the error of a Metrics measures (Metrics.Metric).
const (
	// MetricOutput is the relative attention-output error of HAE-OLS.md §5
	// (samples with q, k and v).
	MetricOutput = "output"
	// MetricLostMass is the attention mass lost, 1 - retained mass, where
	// the retained mass of a query is its attention on the prefix tokens
	// kept exactly plus its attention on the suffix (always exact), both as
	// the full cache gives them (attention-only samples).
	MetricLostMass = "lost-mass"
)

// HeadRef names one query head of a model (core.HeadRef).
type HeadRef struct {
	Layer int `json:"layer"`
	Head  int `json:"head"`
}

// Metrics are the per-head numbers of HAE-OLS.md §5 for one compressed cache
// and one query head. Metric says what Err and the other errors measure:
// the relative output error (MetricOutput) or, for an attention-only
// sample, the lost attention mass (MetricLostMass; Cos is then NaN). In
// JSON, cos and needle_err come last, null when NaN (MarshalJSON).
type Metrics struct {
	Method string  `json:"method"`
	Metric string  `json:"metric"` // MetricOutput or MetricLostMass
	Layer  int     `json:"layer"`
	Head   int     `json:"head"`
	Asked  float64 `json:"asked"` // the ratio asked for
	Ratio  float64 `json:"ratio"` // the ratio used
	Err    float64 `json:"err"`   // mean error over probe queries
	ErrMax float64 `json:"err_max"`
	ErrP95 float64 `json:"err_p95"`
	ErrCal float64 `json:"err_cal"` // the same on calibration queries (in-sample)
	Cos    float64 `json:"cos"`     // mean cosine similarity of probe outputs; NaN for lost mass
	// NeedleErr is err over the probe queries that ask for a needle; NaN
	// (null in JSON) when the sample marks none.
	NeedleErr float64 `json:"needle_err"`
	// Needles says what happened to each needle token.
	Needles []NeedleStatus `json:"needles,omitempty"`
	// Profile is the error of each probe query.
	Profile []float64 `json:"profile"`
	// RowEntropy is the head's mean calibration row entropy.
	RowEntropy float64 `json:"row_entropy"`
}

// NeedleStatus is the fate of one needle token in a compressed cache.
type NeedleStatus struct {
	Pos   int   `json:"pos"`
	Class Class `json:"class"`
}

// Num is a float64 that encodes NaN and infinities as JSON null, and
// decodes null as NaN: a number a method or a sample may lack.
type Num float64

// MarshalJSON encodes NaN and ±Inf as null.
func (n Num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// UnmarshalJSON decodes null as NaN.
func (n *Num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = Num(math.NaN())
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Num(f)
	return nil
}

// metricsJSON is the JSON form of Metrics: cos and needle_err, NaN when
// they do not apply, are Nums (and come last).
type metricsJSON struct {
	plainMetrics
	Cos       Num `json:"cos"`
	NeedleErr Num `json:"needle_err"`
}

// plainMetrics is Metrics without its JSON methods.
type plainMetrics Metrics

// MarshalJSON writes m with cos and needle_err null when they are NaN.
func (m Metrics) MarshalJSON() ([]byte, error) {
	return json.Marshal(metricsJSON{plainMetrics(m), Num(m.Cos), Num(m.NeedleErr)})
}

// UnmarshalJSON reads what MarshalJSON writes (null as NaN).
func (m *Metrics) UnmarshalJSON(b []byte) error {
	var j metricsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*m = Metrics(j.plainMetrics)
	m.Cos, m.NeedleErr = float64(j.Cos), float64(j.NeedleErr)
	return nil
}

// ErrNonFinite is wrapped by the errors of an analysis or a metric that
// overflowed float32 (softmax of ±Inf logits, outputs beyond the float32
// range): such a result is refused rather than shown.
var ErrNonFinite = errors.New("non-finite result")

// CheckFinite returns an error wrapping ErrNonFinite, naming the layer, the
// head, the method and the metric, when a metric that must be a number is
// NaN or infinite (cos is NaN by definition for lost attention mass, and
// needle_err when the sample marks no needle).
func (m *Metrics) CheckFinite() error {
	fs := []struct {
		name string
		v    float64
	}{{"err", m.Err}, {"err_max", m.ErrMax}, {"err_p95", m.ErrP95}, {"err_cal", m.ErrCal}}
	if m.Metric != MetricLostMass {
		fs = append(fs, struct {
			name string
			v    float64
		}{"cos", m.Cos})
	}
	for _, f := range fs {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return fmt.Errorf("layer %d head %d, %s: %w: %s = %v (the outputs or their errors overflow float64/float32; the sample's values are too large)", m.Layer, m.Head, m.Method, ErrNonFinite, f.name, f.v)
		}
	}
	return nil
}

// Class is what a compression method did with one prefix token.
type Class uint8

// Token classes (HAE-OLS.md §5).
const (
	Evicted    Class = iota // dropped: no longer seen by any query
	Sink                    // one of the first tokens, kept exact
	Recent                  // in the recent window, kept exact
	Anchor                  // chosen by the method, kept exact
	Summarized              // folded into a summary token (see Cache.Segment)
	Approx                  // kept, but stored approximately (low rank, quantized)
)

var classNames = [...]string{"evicted", "sink", "recent", "anchor", "summarized", "approx"}

// String returns the class name used in tables, JSON and the UI.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return fmt.Sprintf("class(%d)", int(c))
}

// MarshalText makes classes readable in JSON.
func (c Class) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads a class's name.
func (c *Class) UnmarshalText(b []byte) error {
	for i, n := range classNames {
		if n == string(b) {
			*c = Class(i)
			return nil
		}
	}
	return fmt.Errorf("unknown token class %q", b)
}

// Exact reports whether a token of this class is seen with its exact key and value.
func (c Class) Exact() bool { return c == Sink || c == Recent || c == Anchor }

// Stages are the numbers behind a compressed cache, for explanation: what
// selection chose, how many summaries were fitted, the SVD ranks and the bits
// each part uses.
type Stages struct {
	Sinks        int     `json:"sinks"` // exact tokens by reason
	Recent       int     `json:"recent"`
	Anchors      int     `json:"anchors"`
	Bin          int     `json:"bin"`       // tokens in the recycle bin
	Summaries    int     `json:"summaries"` // summary tokens kept (beta > 0)
	Dropped      int     `json:"dropped"`   // summaries dropped because beta = 0
	RankK        int     `json:"rank_k"`    // SVD ranks of the summary keys and values (0: dense)
	RankV        int     `json:"rank_v"`
	EnergyK      float64 `json:"energy_k"` // squared-Frobenius share kept by those ranks
	EnergyV      float64 `json:"energy_v"`
	ExtraAnchors int     `json:"extra_anchors"` // anchors bought back by the SVD stage
	ExactBits    int64   `json:"exact_bits"`    // bits of exact tokens
	SummaryBits  int64   `json:"summary_bits"`  // bits of summary factors and biases
	QuantBits    int     `json:"quant_bits"`    // quant: bit width of the quantized tokens
	LowRank      int     `json:"low_rank"`      // lowrank: rank of K and V
	FitResidual  float64 `json:"fit_residual"`  // OLS: relative residual ||F beta - z|| / ||z||
}

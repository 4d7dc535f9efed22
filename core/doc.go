// Package core implements HAE-OLS KV-cache compression and its baselines on
// the attention data of one sample (HAE-OLS.md): per-head analysis
// (calibration logits, softmax, salience, key and row entropy, reference
// outputs), the shared memory budget, the compression methods behind one
// small interface, and the metrics.
//
// The API is shaped for interactive use. Analyze does the expensive,
// parameter-free work for one KV head and its query heads once; Compress and
// Evaluate then cost a small fraction of it for every new ratio, method or
// parameter:
//
//	g, _ := core.Analyze(s, layer, kvHead, core.Options{})
//	c, _ := g.Compress("hae-ols", core.DefaultParams(0.3))
//	m := g.Evaluate(c, 0) // metrics of the first query head of the group
//
// An attention-only sample (attn, no q/k/v) is analysed per query head from
// its stored attention: the eviction methods run and are measured by the
// attention mass they lose (MetricLostMass); the methods that need keys and
// values return ErrNeedsKV.
//
// The numerical kernels are the float32 ones of package kernel; the small
// solves run in float64 (package solve).
package core

package eval

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/llama"
)

// BenchmarkEvalKJV is haeols eval of the byte model kjv3m at 1,024 tokens:
// the reference run (prefill and continuation with the full cache, the
// analyses) and every method at five ratios on all cores. It reports the
// reference's and the methods' shares in ms.
func BenchmarkEvalKJV(b *testing.B) {
	lm := kjv(b)
	toks := Continue(lm, []int{BOS}, 1024)
	var jobs []Job
	for _, r := range []float64{0.1, 0.2, 0.3, 0.4, 0.5} {
		for _, name := range core.MethodNames() {
			jobs = append(jobs, Job{name, core.DefaultParams(r)})
		}
	}
	b.ResetTimer()
	var prep, all float64
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		ref, err := Prepare(lm, Sequence{Tokens: toks, Gen: DefaultGen}, core.Options{})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := ref.EvaluateAll(jobs, 0, nil); err != nil {
			b.Fatal(err)
		}
		prep += float64(t1.Sub(t0).Microseconds()) / 1000
		all += float64(time.Since(t1).Microseconds()) / 1000
	}
	b.ReportMetric(prep/float64(b.N), "ms-reference")
	b.ReportMetric(all/float64(b.N), "ms-methods")
}

// BenchmarkEvaluateOne is one method at one ratio on the byte model at
// 1,024 tokens once the reference is prepared: what a slider move costs
// end to end (compression of every KV head, the continuation, the free run).
func BenchmarkEvaluateOne(b *testing.B) {
	lm := kjv(b)
	ref, err := Prepare(lm, Sequence{Tokens: Continue(lm, []int{BOS}, 1024), Gen: DefaultGen}, core.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"hae-ols", "topk"} {
		b.Run(name, func(b *testing.B) {
			ratio := 0.3
			for i := 0; i < b.N; i++ {
				// A new ratio each time, as a slider move asks.
				ratio = 0.3 + 0.01*float64(i%10)
				if _, err := ref.Evaluate(name, core.DefaultParams(ratio)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// kjv loads the byte model kjv3m.bin ($HAEOLS_MODELS, else ../shared/models
// beside the project) or skips.
func kjv(b *testing.B) llama.Decoder {
	dir := os.Getenv("HAEOLS_MODELS")
	if dir == "" {
		dir = filepath.Join("..", "..", "..", "shared", "models")
	}
	m, err := llama.Load(filepath.Join(dir, "kjv3m.bin"))
	if err != nil {
		b.Skipf("skipped: %v", err)
	}
	return m.Decoder()
}

// BenchmarkSliderMove is what the browser computes for a slider move on
// the byte model's default prompt (256 tokens: 224 compressed, 32
// continued, as the app's What the model says runs it) before it shows the
// method's numbers: every KV head re-planned at a new ratio and the
// continuation teacher-forced (EvaluateForced), and then the free run of
// 32 tokens (FreeRun).
func BenchmarkSliderMove(b *testing.B) {
	lm := kjv(b)
	ref, err := Prepare(lm, Sequence{Tokens: Continue(lm, []int{BOS}, 256), Prefix: 224, Gen: 32}, core.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, part := range []string{"forced", "free"} {
		b.Run(part, func(b *testing.B) {
			i := 0
			for b.Loop() {
				p := core.DefaultParams(0.1 + 0.01*float64(i%40))
				i++
				var err error
				if part == "forced" {
					_, err = ref.EvaluateForced("hae-ols", p)
				} else {
					_, _, err = ref.FreeRun("hae-ols", p, nil)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

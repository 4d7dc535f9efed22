package gen

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
)

// The behaviour tests make each head kind real: they compute softmax
// attention from the generated q and k (float64, plain loops) and check what
// the kind promises. Queries measured: the calibration window (the last
// w = min(128, n/2) prefix positions) and the probes, each attending
// causally to keys 0..i, as in the model run; for the needle, also the
// calibration queries over the whole prefix (non-causal, HAE-OLS.md §1).
//
// Thresholds:
//
//	sink       mean mass on keys 0..3                       > 0.5
//	local      mean mass on the last 32 keys (i-31..i)      > 0.5
//	diffuse    mean normalized row entropy                  > 0.8
//	retrieval  needle probes' mass on the needle digits     > 0.5
//	           calibration queries' mass on them            < 0.1 x that
//	induction  mass on keys after earlier copies of the
//	           query token                                  > 0.5
//	           ... and of its last two tokens               > 0.25 (uniform: ~0.002)
func TestHeadBehaviour(t *testing.T) {
	seeds := []uint64{1, 2}
	if testing.Short() || runtime.GOOS == "js" {
		// One seed is enough where time is short: under WebAssembly
		// the default hash test already proves the bits are the same.
		seeds = seeds[:1]
	}
	for _, p := range Presets() {
		for _, seed := range seeds {
			t.Run(fmt.Sprintf("%s/seed=%d", p.Name, seed), func(t *testing.T) {
				c := mustDefault(t, p.Name)
				c.Seed = seed
				s := mustGenerate(t, c)
				var kinds [][]string
				if err := json.Unmarshal([]byte(s.Meta.Extra["head_kinds"]), &kinds); err != nil {
					t.Fatal(err)
				}
				for l := range s.L {
					for h := range s.H {
						checkHead(t, s.Meta.Needles != nil, l, h, kinds[l][h], measure(s, l, h))
					}
				}
			})
		}
	}
}

func checkHead(t *testing.T, needles bool, l, h int, kind string, st headStats) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf("layer %d head %d (%s): %s", l, h, kind, fmt.Sprintf(format, args...))
	}
	switch kind {
	case "sink":
		t.Logf("L%d H%d sink: mass on the first 4 tokens %.3f", l, h, st.sink)
		if st.sink <= 0.5 {
			fail("mass on the first 4 tokens %.3f, want > 0.5", st.sink)
		}
	case "local":
		t.Logf("L%d H%d local: mass on the last 32 tokens %.3f", l, h, st.local)
		if st.local <= 0.5 {
			fail("mass on the last 32 tokens %.3f, want > 0.5", st.local)
		}
	case "diffuse":
		t.Logf("L%d H%d diffuse: mean row entropy %.3f", l, h, st.entropy)
		if st.entropy <= 0.8 {
			fail("mean normalized row entropy %.3f, want > 0.8", st.entropy)
		}
	case "retrieval":
		t.Logf("L%d H%d retrieval: needle probes on the needle %.3f, calibration queries %.4f, row entropy %.3f", l, h, st.needleP, st.needleC, st.entropy)
		if !needles {
			return
		}
		if st.needleP <= 0.5 {
			fail("needle probes put %.3f of their mass on the needle, want > 0.5", st.needleP)
		}
		if st.needleC >= 0.1*st.needleP {
			fail("calibration queries put %.4f on the needle, want < 0.1 x %.3f", st.needleC, st.needleP)
		}
	case "induction":
		t.Logf("L%d H%d induction: after earlier copies of the token %.3f (%d queries), of the last two tokens %.3f (%d queries)", l, h, st.induct, st.inductN, st.bigram, st.bigramN)
		if st.inductN == 0 || st.bigramN == 0 {
			fail("no query has an earlier occurrence to attend to")
			return
		}
		if st.induct <= 0.5 {
			fail("mass after earlier copies of the token %.3f, want > 0.5", st.induct)
		}
		if st.bigram <= 0.25 {
			fail("mass after earlier copies of the last two tokens %.3f, want > 0.25", st.bigram)
		}
	default:
		fail("unknown kind")
	}
}

package solve

import (
	"math"
	"testing"
)

// TestPinvQRShortcut: where the QR bound holds, the back-substitution
// answer equals the SVD one to rounding; near the cutoff the SVD is taken
// (the shortcut reports false) and the rank is the SVD's.
func TestPinvQRShortcut(t *testing.T) {
	for _, tc := range []struct {
		name  string
		m, n  int
		a     []float64
		rcond float64
	}{
		{"uniform 100x64", 100, 64, goldenUniform(11, 100, 64), 1e-6},
		{"uniform 64x64", 64, 64, goldenUniform(12, 64, 64), 1e-6},
		{"uniform 300x7", 300, 7, goldenUniform(13, 300, 7), 1e-6},
		{"uniform 50x20 rcond 0", 50, 20, goldenUniform(14, 50, 20), 0},
	} {
		k := 5
		b := goldenUniform(99, tc.m, k)
		fast, slow := make([]float64, tc.n*k), make([]float64, tc.n*k)
		rf, err := PinvSolve(tc.a, tc.m, tc.n, b, k, tc.rcond, fast)
		if err != nil {
			t.Fatal(err)
		}
		pinvQRShortcut = false
		rs, err := PinvSolve(tc.a, tc.m, tc.n, b, k, tc.rcond, slow)
		pinvQRShortcut = true
		if err != nil {
			t.Fatal(err)
		}
		if rf != rs {
			t.Errorf("%s: rank %d with the shortcut, %d without", tc.name, rf, rs)
		}
		var num, den float64
		for i := range fast {
			num += (fast[i] - slow[i]) * (fast[i] - slow[i])
			den += slow[i] * slow[i]
		}
		if rel := math.Sqrt(num / den); !(rel < 1e-12) {
			t.Errorf("%s: shortcut and SVD differ by %g relative", tc.name, rel)
		}
	}
	// An ill-conditioned matrix (exp features) must not take the shortcut.
	a, _ := goldenProblem(128, 64)
	ws := svdPool.Get().(*svdWork)
	defer svdPool.Put(ws)
	ws.qr.grow(128, 64)
	e := scaleInto(ws.qr.a, a)
	ws.qr.factor(eps, true)
	if ws.qr.rank == 64 && ws.qrSolve(128, 64, goldenUniform(4, 128, 64), 64, 1e-6, e, make([]float64, 64*64)) {
		t.Error("the exp-feature matrix (rank 4 at 1e-6) took the QR shortcut")
	}
}

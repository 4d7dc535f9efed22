package solve

import (
	"fmt"
	"testing"
)

// goldenUniform returns an m x n matrix of entries uniform in [-1, 1) from
// PCG: integer arithmetic and exact scaling only, so the same bits on every
// platform (unlike NormFloat64, which may call math.Exp and math.Log).
func goldenUniform(seed uint64, m, n int) []float64 {
	rng := newRand(seed)
	a := make([]float64, m*n)
	for i := range a {
		a[i] = 2*rng.Float64() - 1
	}
	return a
}

// TestSVDDeterminism checks Decompose and PinvSolve against golden hashes
// recorded on linux/amd64 (GOAMD64=v1). Both are plain Go with explicitly
// rounded products and a fixed order of operations, and the inputs are
// built from integer arithmetic (goldenUniform) and explicitly rounded
// products (goldenProblem), so js/wasm, arm64 and amd64 with GOAMD64=v3
// (where the compiler fuses x*y+z) must all reproduce them. The PinvSolve
// cases take both ways of forming the projected right-hand side (low rank:
// singular vectors; full rank: Q^T B). Checked natively, with GOAMD64=v3
// and under GOOS=js GOARCH=wasm (go_js_wasm_exec).
func TestSVDDeterminism(t *testing.T) {
	expA, _ := goldenProblem(128, 64)
	expTall, _ := goldenProblem(512, 64)
	for _, tc := range []struct {
		name   string
		m, n   int
		a      []float64
		golden uint64
	}{
		{"uniform 64x64", 64, 64, goldenUniform(1, 64, 64), 0x7c80828e6cb6cd41},
		{"uniform 40x64", 40, 64, goldenUniform(2, 40, 64), 0x87bf515a478391a3},
		{"uniform 300x48", 300, 48, goldenUniform(3, 300, 48), 0x93915876c7831ff4},
		{"exp features 128x64", 128, 64, expA, 0x9b6a0f5e6299bcd3},
	} {
		d, err := Decompose(tc.a, tc.m, tc.n)
		if err != nil {
			t.Fatal(err)
		}
		h := hashFloats(d.U) ^ 3*hashFloats(d.S) ^ 5*hashFloats(d.VT)
		if h != tc.golden {
			t.Errorf("Decompose %s: hash %#x, golden %#x", tc.name, h, tc.golden)
		}
	}
	for _, tc := range []struct {
		name    string
		m, n, k int
		a, b    []float64
		rank    int
		golden  uint64
	}{
		{"exp features 128x64", 128, 64, 64, expA, goldenUniform(4, 128, 64), 4, 0xc6acefcab803a055},
		{"exp features 512x64", 512, 64, 64, expTall, goldenUniform(5, 512, 64), 4, 0x5342c5da41c5a539},
		{"uniform 100x64", 100, 64, 64, goldenUniform(6, 100, 64), goldenUniform(7, 100, 64), 64, 0x6542a06e9f871845},
		{"uniform 20x50", 20, 50, 5, goldenUniform(8, 20, 50), goldenUniform(9, 20, 5), 20, 0xd0757c3631a98a5c},
	} {
		x := make([]float64, tc.n*tc.k)
		r, err := PinvSolve(tc.a, tc.m, tc.n, tc.b, tc.k, 1e-6, x)
		if err != nil {
			t.Fatal(err)
		}
		if h := hashFloats(x); r != tc.rank || h != tc.golden {
			t.Errorf("PinvSolve %s: rank %d, hash %#x; golden %d, %#x", tc.name, r, h, tc.rank, tc.golden)
		}
	}
}

// TestSVDConcurrent runs Decompose and PinvSolve of different sizes from
// several goroutines (sharing the workspace pool) and checks that every
// result equals the sequential one bit for bit.
func TestSVDConcurrent(t *testing.T) {
	sizes := []struct{ m, n int }{{64, 64}, {200, 30}, {20, 50}, {7, 3}}
	type result struct{ svd, pinv uint64 }
	run := func(i int) result {
		sz := sizes[i%len(sizes)]
		a := goldenUniform(uint64(20+i%len(sizes)), sz.m, sz.n)
		d, err := Decompose(a, sz.m, sz.n)
		if err != nil {
			t.Error(err)
			return result{}
		}
		x := make([]float64, sz.n*3)
		if _, err := PinvSolve(a, sz.m, sz.n, goldenUniform(30, sz.m, 3), 3, 1e-6, x); err != nil {
			t.Error(err)
		}
		return result{hashFloats(d.U) ^ hashFloats(d.S) ^ hashFloats(d.VT), hashFloats(x)}
	}
	want := make([]result, len(sizes))
	for i := range want {
		want[i] = run(i)
	}
	const workers, reps = 8, 10
	done := make(chan error, workers)
	for w := range workers {
		go func() {
			var err error
			for r := range reps {
				i := (w + r) % len(sizes)
				if got := run(i); got != want[i] {
					err = fmt.Errorf("worker %d, size %v: result differs from the sequential one", w, sizes[i])
				}
			}
			done <- err
		}()
	}
	for range workers {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

package kernel

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"testing"
)

// TestBlockDots checks BlockDots on every path of this build against the
// portable loops bit for bit, the portable loops against the definition
// written out (block sums of Dot, added in block order) bit for bit and
// against a float64 reference within 1e-5 relative to the sum of
// |products|, for row counts around the lane widths, vector counts around
// 4, lengths around the block sizes, and a row stride wider than the rows;
// the results' hash is pinned, the same on every platform and path.
func TestBlockDots(t *testing.T) {
	r := &rng{41}
	h := fnv.New64a()
	work := make([]float32, BlockDotsWork(300))
	for _, bs := range []int{1, 32, 256} {
		for _, d := range []int{1, 7, 32, 33, 256, 300} {
			if d%bs != 0 && bs != 256 {
				continue // quantized rows are whole blocks; float rows take chunks of 256
			}
			for _, m := range []int{1, 3, 4, 5, 8} {
				for _, n := range []int{1, 3, 4, 6, 9} {
					name := fmt.Sprintf("bs %d d %d m %d n %d", bs, d, m, n)
					ldd := m + 2
					w, x := r.vec(m*d), r.vec(n*d)
					want := make([]float32, n*ldd)
					withGo(func() { BlockDots(want, ldd, w, m, x, n, d, bs, work) })
					for _, p := range kernelPaths() {
						got := make([]float32, n*ldd)
						withPath(p, func() { BlockDots(got, ldd, w, m, x, n, d, bs, work) })
						sameBits(t, name+" "+p.name, got, want)
					}
					for j := 0; j < n; j++ {
						for i := 0; i < ldd; i++ {
							if i >= m {
								if want[j*ldd+i] != 0 {
									t.Fatalf("%s: wrote dst[%d] past the rows", name, j*ldd+i)
								}
								continue
							}
							var s float32
							var s64, mag float64
							for b0 := 0; b0 < d; b0 += bs {
								var a float32
								for c := b0; c < min(b0+bs, d); c++ {
									a += float32(w[i*d+c] * x[j*d+c])
									p := float64(w[i*d+c]) * float64(x[j*d+c])
									s64 += p
									mag += math.Abs(p)
								}
								s += a
							}
							got := want[j*ldd+i]
							if math.Float32bits(got) != math.Float32bits(s) {
								t.Fatalf("%s: row %d vector %d: %v, definition %v", name, i, j, got, s)
							}
							if math.Abs(float64(got)-s64) > 1e-5*mag+1e-30 {
								t.Errorf("%s: row %d vector %d: %v, float64 %v", name, i, j, got, s64)
							}
						}
					}
					for _, v := range want {
						fmt.Fprintf(h, "%08x", math.Float32bits(v))
					}
				}
			}
		}
	}
	const golden = 0x3a0f8602d9611e3a
	if got := h.Sum64(); got != golden {
		t.Errorf("hash %#x, want %#x", got, uint64(golden))
	}
}

// TestBlockDotsPacked: a panel packed as BlockDotsPacked documents (and
// as PackPanel packs it) gives BlockDots's bits on every vector path,
// whatever the padding vectors hold.
func TestBlockDotsPacked(t *testing.T) {
	r := &rng{43}
	for _, p := range kernelPaths() {
		for _, bs := range []int{1, 32, 256} {
			for _, d := range []int{1, 32, 64, 300} {
				if d%bs != 0 && bs != 256 {
					continue
				}
				for _, m := range []int{1, 2, 4, 5, 7, 8} {
					for _, n := range []int{1, 2, 4, 5, 8, 11} {
						var lanes int
						withPath(p, func() { lanes = PanelLanes(m) })
						if lanes == 0 {
							continue
						}
						name := fmt.Sprintf("%s bs %d d %d m %d n %d", p.name, bs, d, m, n)
						ldd := m + 1
						w, x := r.vec(m*d), r.vec(n*d)
						want := make([]float32, n*ldd)
						withGo(func() { BlockDots(want, ldd, w, m, x, n, d, bs, make([]float32, BlockDotsWork(d))) })
						subs := (m + lanes - 1) / lanes
						wt := make([]float32, subs*lanes*d)
						for i := 0; i < m; i++ {
							for c := 0; c < d; c++ {
								wt[(i/lanes)*lanes*d+c*lanes+i%lanes] = w[i*d+c]
							}
						}
						// The padding vectors hold NaNs: their sums are
						// discarded.
						xp := append(slices.Clone(x), make([]float32, ((n+3)&^3-n)*d)...)
						for i := n * d; i < len(xp); i++ {
							xp[i] = float32(math.NaN())
						}
						got := make([]float32, n*ldd)
						withPath(p, func() { BlockDotsPacked(got, ldd, wt, m, xp, n, d, bs) })
						sameBits(t, name, got, want)
						// PackPanel packs as above.
						wt2 := make([]float32, 8*d)
						withPath(p, func() { PackPanel(wt2, w, m, d) })
						sameBits(t, name+" PackPanel", wt2[:len(wt)], wt)
					}
				}
			}
		}
	}
}

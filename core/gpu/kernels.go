package gpu

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/haeols/haeols/core/kernel"
)

// This file is the host side of every kernel: it checks shapes, uploads the
// inputs, dispatches the shaders of package wgsl and reads the results
// back. It builds in every configuration; without a device (no cgo) Open
// fails first, so nothing here runs.

// maxGroups is the WebGPU limit on workgroups per dimension.
const maxGroups = 65535

// params packs a uniform block: uint32, int (as uint32) and float32 values,
// little endian, in order.
func params(vals ...any) []byte {
	b := make([]byte, 0, 4*len(vals))
	for _, v := range vals {
		switch x := v.(type) {
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, x)
		case int:
			b = binary.LittleEndian.AppendUint32(b, uint32(x))
		case float32:
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		case bool:
			u := uint32(0)
			if x {
				u = 1
			}
			b = binary.LittleEndian.AppendUint32(b, u)
		default:
			panic(fmt.Sprintf("gpu: params: %T", v))
		}
	}
	return b
}

// f32 returns the bytes of x (a copy; the browser backend copies anyway).
func f32(x []float32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// u32 returns the bytes of the non-negative indices x.
func u32(x []int32) []byte {
	b := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(v))
	}
	return b
}

// rowGroups returns the workgroup grid for one workgroup per row.
func rowGroups(m int) [3]uint32 {
	if m <= maxGroups {
		return [3]uint32{uint32(m), 1, 1}
	}
	return [3]uint32{maxGroups, uint32((m + maxGroups - 1) / maxGroups), 1}
}

// threadGroups returns the grid for one thread per element, 64 threads a
// workgroup (x wraps at maxGroups workgroups, as the shaders expect).
func threadGroups(n int) [3]uint32 {
	g := (n + 63) / 64
	if g <= maxGroups {
		return [3]uint32{uint32(max(g, 1)), 1, 1}
	}
	return [3]uint32{maxGroups, uint32((g + maxGroups - 1) / maxGroups), 1}
}

// shapeErr checks that every slice holds at least its stated length.
func shapeErr(op string, pairs ...any) error {
	for i := 0; i+2 < len(pairs)+1; i += 3 {
		name, have, want := pairs[i].(string), pairs[i+1].(int), pairs[i+2].(int)
		if have < want {
			return fmt.Errorf("gpu: %s: %s has %d elements, need %d", op, name, have, want)
		}
	}
	return nil
}

// rowChunk is how many rows of n floats fit in one binding.
func (d *Device) rowChunk(n int) (int, error) {
	r := int(d.Info().MaxBinding / uint64(4*max(n, 1)))
	if r < 1 {
		return 0, fmt.Errorf("gpu: one row of %d floats exceeds the binding limit of %d bytes", n, d.Info().MaxBinding)
	}
	return r, nil
}

// chunks calls f for the row blocks [i0, i0+r) of m rows of n floats, each
// block as large as one binding allows, and stops at the first error.
func (d *Device) chunks(m, n int, f func(i0, r int) error) error {
	chunk, err := d.rowChunk(n)
	if err != nil {
		return err
	}
	for i0 := 0; i0 < m; i0 += chunk {
		if err := f(i0, min(chunk, m-i0)); err != nil {
			return err
		}
	}
	return nil
}

// bufset makes buffers and frees them together; the first error sticks
// (later calls return nil buffers), so a sequence of uploads is checked
// once.
type bufset struct {
	d    *Device
	list []*gbuf
	err  error
}

func (b *bufset) keep(g *gbuf, err error) *gbuf {
	if err != nil && b.err == nil {
		b.err = err
	}
	if g != nil {
		b.list = append(b.list, g)
	}
	return g
}

// up uploads x (read-only input).
func (b *bufset) up(x []float32) *gbuf {
	if b.err != nil {
		return nil
	}
	return b.keep(b.d.upload(f32(x), 0))
}

// alloc makes a zeroed buffer of n floats.
func (b *bufset) alloc(n int) *gbuf {
	if b.err != nil {
		return nil
	}
	return b.keep(b.d.alloc(n))
}

// free releases every buffer made so far.
func (b *bufset) free() {
	b.d.free(b.list...)
	b.list = nil
}

// Logits sets dst[i*n+j] = scale*dot(q[i], k[j]) + bias[j] (bias nil: 0) on
// the GPU, like kernel.Logits (and the bias as Partial.AddKeys adds it).
func (d *Device) Logits(dst, q []float32, m int, k []float32, n, dim int, scale float32, bias []float32) error {
	if err := shapeErr("logits", "dst", len(dst), m*n, "q", len(q), m*dim, "k", len(k), n*dim); err != nil {
		return err
	}
	if bias != nil && len(bias) < n {
		return fmt.Errorf("gpu: logits: bias has %d elements, need %d", len(bias), n)
	}
	if m == 0 || n == 0 {
		return nil
	}
	d.lock()
	defer d.unlock()
	in := &bufset{d: d}
	defer in.free()
	kb, bb := in.up(k[:n*dim]), in.up(bias)
	if in.err != nil {
		return in.err
	}
	return d.chunks(m, n, func(i0, r int) error {
		b := &bufset{d: d}
		defer b.free()
		qb, sb := b.up(q[i0*dim:(i0+r)*dim]), b.alloc(r*n)
		if b.err != nil {
			return b.err
		}
		if err := d.logits(sb, qb, r, kb, n, dim, scale, bb, bias != nil); err != nil {
			return err
		}
		return d.download(dst[i0*n:(i0+r)*n], sb)
	})
}

// logits queues the logits kernel for r rows.
func (d *Device) logits(s, q *gbuf, r int, k *gbuf, n, dim int, scale float32, bias *gbuf, hasBias bool) error {
	gx, gy := (n+31)/32, (r+31)/32
	if gx > maxGroups || gy > maxGroups {
		return fmt.Errorf("gpu: logits of %d x %d exceed the workgroup grid", r, n)
	}
	return d.run("logits", "main", params(r, n, dim, hasBias, scale), [3]uint32{uint32(gx), uint32(gy), 1}, q, k, bias, s)
}

// SoftmaxRows is kernel.SoftmaxRows on the GPU: dst = row softmax of the
// m x n logits src, with each row's maximum in mu and its sum of
// exponentials in sum.
func (d *Device) SoftmaxRows(dst, src []float32, m, n int, mu, sum []float32) error {
	if err := shapeErr("softmax", "dst", len(dst), m*n, "src", len(src), m*n, "mu", len(mu), m, "sum", len(sum), m); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	d.lock()
	defer d.unlock()
	return d.chunks(m, n, func(i0, r int) error {
		b := &bufset{d: d}
		defer b.free()
		sb, ab, mb, tb := b.up(src[i0*n:(i0+r)*n]), b.alloc(r*n), b.alloc(r), b.alloc(r)
		if b.err != nil {
			return b.err
		}
		if err := d.softmax(ab, mb, tb, sb, r, n, false, 0); err != nil {
			return err
		}
		return d.downloadAll(dst[i0*n:(i0+r)*n], ab, mu[i0:i0+r], mb, sum[i0:i0+r], tb)
	})
}

// downloadAll reads pairs of (destination slice, buffer), stopping at the
// first error.
func (d *Device) downloadAll(pairs ...any) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if err := d.download(pairs[i].([]float32), pairs[i+1].(*gbuf)); err != nil {
			return err
		}
	}
	return nil
}

// softmax queues the softmax kernel for r rows of n logits; with causal,
// row i covers min(n, base+i+1) columns.
func (d *Device) softmax(a, mu, sum, s *gbuf, r, n int, causal bool, base int) error {
	return d.run("softmax", "main", params(r, n, causal, base), rowGroups(r), s, a, mu, sum)
}

// Columns computes on the GPU the salience (kernel.ColMean) and the
// normalized key entropy (kernel.KeyEntropy) of the m x n attention a.
func (d *Device) Columns(salience, keyEntropy, a []float32, m, n int) error {
	if err := shapeErr("columns", "salience", len(salience), n, "key entropy", len(keyEntropy), n, "a", len(a), m*n); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	d.lock()
	defer d.unlock()
	in := &bufset{d: d}
	defer in.free()
	type part struct {
		r int
		a *gbuf
	}
	var parts []part
	if err := d.chunks(m, n, func(i0, r int) error {
		parts = append(parts, part{r, in.up(a[i0*n : (i0+r)*n])})
		return in.err
	}); err != nil {
		return err
	}
	c, err := d.newColumns(n, m)
	if err != nil {
		return err
	}
	defer c.free()
	for pass := 0; pass < 2; pass++ {
		for _, p := range parts {
			if err := c.add(p.a, p.r, pass); err != nil {
				return err
			}
		}
	}
	return c.finish(salience, keyEntropy)
}

// columns is the state of the column reductions over row chunks.
type columns struct {
	d                 *Device
	n, m              int
	cs, ent, sal, key *gbuf
}

func (d *Device) newColumns(n, m int) (*columns, error) {
	c := &columns{d: d, n: n, m: m}
	var err error
	for _, p := range []**gbuf{&c.cs, &c.ent, &c.sal, &c.key} {
		if *p, err = d.alloc(n); err != nil {
			c.free()
			return nil, err
		}
	}
	return c, nil
}

func (c *columns) free() { c.d.free(c.cs, c.ent, c.sal, c.key) }

func (c *columns) params(r int) []byte {
	invLog := float32(0)
	if c.m > 1 {
		invLog = 1 / kernel.Log32(float32(c.m))
	}
	return params(r, c.n, c.m, 0, 1/float32(c.m), invLog)
}

// add queues pass 0 (column sums) or pass 1 (entropy terms) for a chunk of
// r rows. Every chunk's pass 0 must come before any pass 1.
func (c *columns) add(a *gbuf, r, pass int) error {
	entry := "colsum"
	if pass == 1 {
		entry = "entropy"
	}
	return c.d.run("columns", entry, c.params(r), threadGroups(c.n), a, c.cs, c.ent, c.sal, c.key)
}

// finish computes the results and reads them back.
func (c *columns) finish(salience, keyEntropy []float32) error {
	if err := c.d.run("columns", "finish", c.params(0), threadGroups(c.n), c.d.none, c.cs, c.ent, c.sal, c.key); err != nil {
		return err
	}
	return c.d.downloadAll(salience[:c.n], c.sal, keyEntropy[:c.n], c.key)
}

// RowEntropy is kernel.RowEntropy on the GPU.
func (d *Device) RowEntropy(dst, a []float32, m, n int) error {
	if err := shapeErr("row entropy", "dst", len(dst), m, "a", len(a), m*n); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	d.lock()
	defer d.unlock()
	return d.chunks(m, n, func(i0, r int) error {
		b := &bufset{d: d}
		defer b.free()
		ab, ob := b.up(a[i0*n:(i0+r)*n]), b.alloc(r)
		if b.err != nil {
			return b.err
		}
		if err := d.rowEntropy(ob, ab, r, n); err != nil {
			return err
		}
		return d.download(dst[i0:i0+r], ob)
	})
}

func (d *Device) rowEntropy(dst, a *gbuf, r, n int) error {
	inv := float32(0)
	if n > 1 {
		inv = 1 / kernel.Log32(float32(n))
	}
	return d.run("rowentropy", "main", params(r, n, inv), rowGroups(r), a, dst)
}

// BinMass is kernel.BinMass on the GPU: z[i] = sum over idx of a[i,j] and
// y[i,:] = sum over idx of a[i,j] v[j,:], in the order of idx. A nil idx
// means all n keys in order (then y = a*v, kernel.MatMul).
func (d *Device) BinMass(z, y, a []float32, m, n int, idx []int32, v []float32, dim int) error {
	if err := shapeErr("bin mass", "z", len(z), m, "y", len(y), m*dim, "a", len(a), m*n, "v", len(v), n*dim); err != nil {
		return err
	}
	for _, j := range idx {
		if j < 0 || int(j) >= n {
			return fmt.Errorf("gpu: bin mass: key index %d outside [0, %d)", j, n)
		}
	}
	if m == 0 {
		return nil
	}
	d.lock()
	defer d.unlock()
	in := &bufset{d: d}
	defer in.free()
	vb := in.up(v[:n*dim])
	ib := in.keep(d.upload(u32(idx), 0))
	if in.err != nil {
		return in.err
	}
	return d.chunks(m, n, func(i0, r int) error {
		b := &bufset{d: d}
		defer b.free()
		ab, zb, yb := b.up(a[i0*n:(i0+r)*n]), b.alloc(r), b.alloc(r*dim)
		if b.err != nil {
			return b.err
		}
		if err := d.weighted(zb, yb, ab, r, n, ib, idx, vb, dim); err != nil {
			return err
		}
		return d.downloadAll(z[i0:i0+r], zb, y[i0*dim:(i0+r)*dim], yb)
	})
}

// weighted queues the weighted-values kernel for r rows (idx nil: all n
// keys; ib then is ignored).
func (d *Device) weighted(z, y, a *gbuf, r, n int, ib *gbuf, idx []int32, v *gbuf, dim int) error {
	cnt, use := n, idx != nil
	if use {
		cnt = len(idx)
	}
	gx, gy := (r+3)/4, (dim+63)/64
	if gx > maxGroups {
		return fmt.Errorf("gpu: weighted values of %d rows exceed the workgroup grid", r)
	}
	return d.run("weighted", "main", params(r, n, dim, cnt, use), [3]uint32{uint32(gx), uint32(gy), 1}, a, ib, v, z, y)
}

// Features sets f[i*ns+t] = exp(scale*dot(q[i], khat[t]) - mu[i]) on the GPU:
// the summary features of the least-squares fit (core's fitSummaries does
// this in float64 from kernel.Logits).
func (d *Device) Features(f, q []float32, m int, khat []float32, ns, dim int, scale float32, mu []float32) error {
	if err := shapeErr("features", "f", len(f), m*ns, "q", len(q), m*dim, "khat", len(khat), ns*dim, "mu", len(mu), m); err != nil {
		return err
	}
	if m == 0 || ns == 0 {
		return nil
	}
	d.lock()
	defer d.unlock()
	b := &bufset{d: d}
	defer b.free()
	qb, kb, mb, fb := b.up(q[:m*dim]), b.up(khat[:ns*dim]), b.up(mu[:m]), b.alloc(m*ns)
	if b.err != nil {
		return b.err
	}
	if err := d.run("features", "main", params(m, ns, dim, scale), threadGroups(m*ns), qb, kb, mb, fb); err != nil {
		return err
	}
	return d.download(f[:m*ns], fb)
}

// RowErrors sets, for the m rows of the outputs o and the references r
// (m x dim), sums[4i:4i+4] = (sum (o-r)^2, sum r^2, sum o^2, sum o*r) on the
// GPU: the sums behind the relative error and the cosine of HAE-OLS.md §5.
func (d *Device) RowErrors(sums, o, r []float32, m, dim int) error {
	if err := shapeErr("row errors", "sums", len(sums), 4*m, "o", len(o), m*dim, "r", len(r), m*dim); err != nil {
		return err
	}
	if m == 0 {
		return nil
	}
	d.lock()
	defer d.unlock()
	b := &bufset{d: d}
	defer b.free()
	ob, rb, sb := b.up(o[:m*dim]), b.up(r[:m*dim]), b.alloc(4*m)
	if b.err != nil {
		return b.err
	}
	if err := d.run("errors", "main", params(m, dim), threadGroups(m), ob, rb, sb); err != nil {
		return err
	}
	return d.download(sums[:4*m], sb)
}

// Attend sets out (m x dim) to the attention outputs of the m query rows q
// over the c keys (c x dim) with values vals and logit biases bias (nil:
// none): logits, row softmax and weighted values on the GPU. Row i sees
// every key when causal is false, else keys [0, base+i] (the base shared
// keys, then a causal suffix). This is the attention over a compressed (or
// full) cache of HAE-OLS.md §5.
func (d *Device) Attend(out, q []float32, m int, keys, vals []float32, c, dim int, scale float32, bias []float32, base int, causal bool) error {
	if err := shapeErr("attend", "out", len(out), m*dim, "q", len(q), m*dim, "keys", len(keys), c*dim, "values", len(vals), c*dim); err != nil {
		return err
	}
	if bias != nil && len(bias) < c {
		return fmt.Errorf("gpu: attend: bias has %d elements, need %d", len(bias), c)
	}
	if m == 0 {
		return nil
	}
	if c == 0 {
		return fmt.Errorf("gpu: attend: no keys")
	}
	d.lock()
	defer d.unlock()
	in := &bufset{d: d}
	defer in.free()
	kb, vb, bb := in.up(keys[:c*dim]), in.up(vals[:c*dim]), in.up(bias)
	if in.err != nil {
		return in.err
	}
	return d.chunks(m, c, func(i0, r int) error {
		b := &bufset{d: d}
		defer b.free()
		qb := b.up(q[i0*dim : (i0+r)*dim])
		sb, ab, mb, tb, zb, ob := b.alloc(r*c), b.alloc(r*c), b.alloc(r), b.alloc(r), b.alloc(r), b.alloc(r*dim)
		if b.err != nil {
			return b.err
		}
		if err := d.logits(sb, qb, r, kb, c, dim, scale, bb, bias != nil); err != nil {
			return err
		}
		if err := d.softmax(ab, mb, tb, sb, r, c, causal, base+i0); err != nil {
			return err
		}
		if err := d.weighted(zb, ob, ab, r, c, d.none, nil, vb, dim); err != nil {
			return err
		}
		return d.download(out[i0*dim:(i0+r)*dim], ob)
	})
}

// Calibrate is kernel.Calibrate on the GPU: the logits, attention, row
// maxima and sums, salience, key entropy, row entropy and full-cache outputs
// of the m rows q against the n keys k with values v. Rows are processed in
// chunks that fit the device's binding limit; the attention of every chunk
// stays on the GPU for the key entropy's second pass.
//
// The outputs O are computed as Attend computes them (softmax weights times
// values), so a cache that keeps every token, attended with Attend, gives
// error exactly 0 against them.
func (d *Device) Calibrate(st *kernel.Stats, q []float32, m int, k, v []float32, n, dim int, scale float32) error {
	if err := shapeErr("calibrate", "q", len(q), m*dim, "k", len(k), n*dim, "v", len(v), n*dim,
		"S", len(st.S), m*n, "A", len(st.A), m*n, "Mu", len(st.Mu), m, "RowSum", len(st.RowSum), m,
		"Salience", len(st.Salience), n, "KeyEntropy", len(st.KeyEntropy), n, "RowEntropy", len(st.RowEntropy), m, "O", len(st.O), m*dim); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return fmt.Errorf("gpu: calibrate: %d rows, %d keys", m, n)
	}
	d.lock()
	defer d.unlock()
	in := &bufset{d: d} // keys, values and every chunk's attention
	defer in.free()
	kb, vb := in.up(k[:n*dim]), in.up(v[:n*dim])
	if in.err != nil {
		return in.err
	}
	cols, err := d.newColumns(n, m)
	if err != nil {
		return err
	}
	defer cols.free()
	type part struct {
		r int
		a *gbuf
	}
	var parts []part
	err = d.chunks(m, n, func(i0, r int) error {
		b := &bufset{d: d}
		defer b.free()
		ab := in.alloc(r * n)
		qb, sb := b.up(q[i0*dim:(i0+r)*dim]), b.alloc(r*n)
		mb, tb, eb, zb, ob := b.alloc(r), b.alloc(r), b.alloc(r), b.alloc(r), b.alloc(r*dim)
		if in.err != nil {
			return in.err
		}
		if b.err != nil {
			return b.err
		}
		for _, step := range []func() error{
			func() error { return d.logits(sb, qb, r, kb, n, dim, scale, d.none, false) },
			func() error { return d.softmax(ab, mb, tb, sb, r, n, false, 0) },
			func() error { return d.rowEntropy(eb, ab, r, n) },
			func() error { return d.weighted(zb, ob, ab, r, n, d.none, nil, vb, dim) },
			func() error { return cols.add(ab, r, 0) },
		} {
			if err := step(); err != nil {
				return err
			}
		}
		parts = append(parts, part{r, ab})
		return d.downloadAll(st.S[i0*n:(i0+r)*n], sb, st.A[i0*n:(i0+r)*n], ab, st.Mu[i0:i0+r], mb,
			st.RowSum[i0:i0+r], tb, st.RowEntropy[i0:i0+r], eb, st.O[i0*dim:(i0+r)*dim], ob)
	})
	if err != nil {
		return err
	}
	for _, p := range parts {
		if err := cols.add(p.a, p.r, 1); err != nil {
			return err
		}
	}
	return cols.finish(st.Salience, st.KeyEntropy)
}

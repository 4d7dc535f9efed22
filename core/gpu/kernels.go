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
	kb, err := d.upload(f32(k[:n*dim]), 0)
	if err != nil {
		return err
	}
	defer d.free(kb)
	bb, err := d.upload(f32(bias), 0)
	if err != nil {
		return err
	}
	defer d.free(bb)
	chunk, err := d.rowChunk(n)
	if err != nil {
		return err
	}
	for i0 := 0; i0 < m; i0 += chunk {
		r := min(chunk, m-i0)
		qb, err := d.upload(f32(q[i0*dim:(i0+r)*dim]), 0)
		if err != nil {
			return err
		}
		sb, err := d.alloc(r * n)
		if err == nil {
			err = d.logits(sb, qb, r, kb, n, dim, scale, bb, bias != nil)
		}
		if err == nil {
			err = d.download(dst[i0*n:(i0+r)*n], sb)
		}
		d.free(qb, sb)
		if err != nil {
			return err
		}
	}
	return nil
}

// logits queues the logits kernel for r rows.
func (d *Device) logits(s, q *gbuf, r int, k *gbuf, n, dim int, scale float32, bias *gbuf, hasBias bool) error {
	gx, gy := (n+15)/16, (r+15)/16
	if gx > maxGroups || gy > maxGroups {
		return fmt.Errorf("gpu: logits of %d x %d exceed the workgroup grid", r, n)
	}
	return d.run("logits", "main", params(r, n, dim, hasBias, scale), [3]uint32{uint32(gx), uint32(gy), 1}, q, k, bias, s)
}

// SoftmaxRows is kernel.SoftmaxRows on the GPU: dst = row softmax of the
// m x n logits src, with each row's maximum in mu and its sum of
// exponentials in sum.
func (d *Device) SoftmaxRows(dst, src []float32, m, n int, mu, sum []float32) error {
	return d.softmaxHost(dst, src, m, n, mu, sum, false, 0)
}

func (d *Device) softmaxHost(dst, src []float32, m, n int, mu, sum []float32, causal bool, base int) error {
	if err := shapeErr("softmax", "dst", len(dst), m*n, "src", len(src), m*n, "mu", len(mu), m, "sum", len(sum), m); err != nil {
		return err
	}
	if m == 0 || n == 0 {
		return nil
	}
	d.lock()
	defer d.unlock()
	chunk, err := d.rowChunk(n)
	if err != nil {
		return err
	}
	for i0 := 0; i0 < m; i0 += chunk {
		r := min(chunk, m-i0)
		sb, err := d.upload(f32(src[i0*n:(i0+r)*n]), 0)
		if err != nil {
			return err
		}
		bufs := []*gbuf{sb}
		ab, err := d.alloc(r * n)
		bufs = append(bufs, ab)
		var mb, tb *gbuf
		if err == nil {
			mb, err = d.alloc(r)
			bufs = append(bufs, mb)
		}
		if err == nil {
			tb, err = d.alloc(r)
			bufs = append(bufs, tb)
		}
		if err == nil {
			err = d.softmax(ab, mb, tb, sb, r, n, causal, base+i0)
		}
		for _, x := range []struct {
			dst []float32
			b   *gbuf
		}{{dst[i0*n : (i0+r)*n], ab}, {mu[i0 : i0+r], mb}, {sum[i0 : i0+r], tb}} {
			if err == nil {
				err = d.download(x.dst, x.b)
			}
		}
		d.free(bufs...)
		if err != nil {
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
	chunk, err := d.rowChunk(n)
	if err != nil {
		return err
	}
	var chunks []*gbuf
	defer func() { d.free(chunks...) }()
	for i0 := 0; i0 < m; i0 += chunk {
		r := min(chunk, m-i0)
		b, err := d.upload(f32(a[i0*n:(i0+r)*n]), 0)
		if err != nil {
			return err
		}
		chunks = append(chunks, b)
	}
	c, err := d.newColumns(n, m)
	if err != nil {
		return err
	}
	defer c.free()
	for pass := 0; pass < 2; pass++ {
		for i, b := range chunks {
			if err := c.add(b, min(chunk, m-i*chunk), pass); err != nil {
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

// finish computes the results and, for non-nil destinations, reads them
// back.
func (c *columns) finish(salience, keyEntropy []float32) error {
	if err := c.d.run("columns", "finish", c.params(0), threadGroups(c.n), c.d.none, c.cs, c.ent, c.sal, c.key); err != nil {
		return err
	}
	if err := c.d.download(salience[:c.n], c.sal); err != nil {
		return err
	}
	return c.d.download(keyEntropy[:c.n], c.key)
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
	chunk, err := d.rowChunk(n)
	if err != nil {
		return err
	}
	for i0 := 0; i0 < m; i0 += chunk {
		r := min(chunk, m-i0)
		ab, err := d.upload(f32(a[i0*n:(i0+r)*n]), 0)
		if err != nil {
			return err
		}
		ob, err := d.alloc(r)
		if err == nil {
			err = d.rowEntropy(ob, ab, r, n)
		}
		if err == nil {
			err = d.download(dst[i0:i0+r], ob)
		}
		d.free(ab, ob)
		if err != nil {
			return err
		}
	}
	return nil
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
	vb, err := d.upload(f32(v[:n*dim]), 0)
	if err != nil {
		return err
	}
	defer d.free(vb)
	ib, err := d.upload(u32(idx), 0)
	if err != nil {
		return err
	}
	defer d.free(ib)
	chunk, err := d.rowChunk(n)
	if err != nil {
		return err
	}
	for i0 := 0; i0 < m; i0 += chunk {
		r := min(chunk, m-i0)
		ab, err := d.upload(f32(a[i0*n:(i0+r)*n]), 0)
		if err != nil {
			return err
		}
		bufs := []*gbuf{ab}
		zb, err := d.alloc(r)
		bufs = append(bufs, zb)
		var yb *gbuf
		if err == nil {
			yb, err = d.alloc(r * dim)
			bufs = append(bufs, yb)
		}
		if err == nil {
			err = d.weighted(zb, yb, ab, r, n, ib, idx, vb, dim)
		}
		if err == nil {
			err = d.download(z[i0:i0+r], zb)
		}
		if err == nil {
			err = d.download(y[i0*dim:(i0+r)*dim], yb)
		}
		d.free(bufs...)
		if err != nil {
			return err
		}
	}
	return nil
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
	var bufs []*gbuf
	defer func() { d.free(bufs...) }()
	var err error
	up := func(x []float32) *gbuf {
		if err != nil {
			return nil
		}
		var b *gbuf
		b, err = d.upload(f32(x), 0)
		bufs = append(bufs, b)
		return b
	}
	qb, kb, mb := up(q[:m*dim]), up(khat[:ns*dim]), up(mu[:m])
	if err != nil {
		return err
	}
	fb, err := d.alloc(m * ns)
	if err != nil {
		return err
	}
	bufs = append(bufs, fb)
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
	ob, err := d.upload(f32(o[:m*dim]), 0)
	if err != nil {
		return err
	}
	defer d.free(ob)
	rb, err := d.upload(f32(r[:m*dim]), 0)
	if err != nil {
		return err
	}
	defer d.free(rb)
	sb, err := d.alloc(4 * m)
	if err != nil {
		return err
	}
	defer d.free(sb)
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
	var bufs []*gbuf
	defer func() { d.free(bufs...) }()
	kb, err := d.upload(f32(keys[:c*dim]), 0)
	if err != nil {
		return err
	}
	bufs = append(bufs, kb)
	vb, err := d.upload(f32(vals[:c*dim]), 0)
	if err != nil {
		return err
	}
	bufs = append(bufs, vb)
	bb, err := d.upload(f32(bias), 0)
	if err != nil {
		return err
	}
	bufs = append(bufs, bb)
	chunk, err := d.rowChunk(c)
	if err != nil {
		return err
	}
	for i0 := 0; i0 < m; i0 += chunk {
		r := min(chunk, m-i0)
		if err := d.attendChunk(out[i0*dim:(i0+r)*dim], q[i0*dim:(i0+r)*dim], r, kb, vb, c, dim, scale, bb, bias != nil, base+i0, causal); err != nil {
			return err
		}
	}
	return nil
}

func (d *Device) attendChunk(out, q []float32, r int, kb, vb *gbuf, c, dim int, scale float32, bb *gbuf, hasBias bool, base int, causal bool) error {
	var bufs []*gbuf
	defer func() { d.free(bufs...) }()
	var err error
	mk := func(n int) *gbuf {
		if err != nil {
			return nil
		}
		var b *gbuf
		b, err = d.alloc(n)
		bufs = append(bufs, b)
		return b
	}
	qb, err := d.upload(f32(q), 0)
	if err != nil {
		return err
	}
	bufs = append(bufs, qb)
	sb, ab, mb, tb, zb, ob := mk(r*c), mk(r*c), mk(r), mk(r), mk(r), mk(r*dim)
	if err != nil {
		return err
	}
	if err := d.logits(sb, qb, r, kb, c, dim, scale, bb, hasBias); err != nil {
		return err
	}
	if err := d.softmax(ab, mb, tb, sb, r, c, causal, base); err != nil {
		return err
	}
	if err := d.weighted(zb, ob, ab, r, c, d.none, nil, vb, dim); err != nil {
		return err
	}
	return d.download(out, ob)
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
	var bufs []*gbuf
	defer func() { d.free(bufs...) }()
	var err error
	keep := func(b *gbuf, e error) *gbuf {
		if err == nil {
			err = e
		}
		bufs = append(bufs, b)
		return b
	}
	kb := keep(d.upload(f32(k[:n*dim]), 0))
	vb := keep(d.upload(f32(v[:n*dim]), 0))
	none := d.none
	if err != nil {
		return err
	}
	chunk, err := d.rowChunk(n)
	if err != nil {
		return err
	}
	cols, err := d.newColumns(n, m)
	if err != nil {
		return err
	}
	defer cols.free()
	type part struct {
		i0, r int
		a     *gbuf
	}
	var parts []part
	for i0 := 0; i0 < m; i0 += chunk {
		r := min(chunk, m-i0)
		qb := keep(d.upload(f32(q[i0*dim:(i0+r)*dim]), 0))
		sb, ab := keep(d.alloc(r*n)), keep(d.alloc(r*n))
		mb, tb, eb := keep(d.alloc(r)), keep(d.alloc(r)), keep(d.alloc(r))
		zb, ob := keep(d.alloc(r)), keep(d.alloc(r*dim))
		if err != nil {
			return err
		}
		steps := []func() error{
			func() error { return d.logits(sb, qb, r, kb, n, dim, scale, none, false) },
			func() error { return d.softmax(ab, mb, tb, sb, r, n, false, 0) },
			func() error { return d.rowEntropy(eb, ab, r, n) },
			func() error { return d.weighted(zb, ob, ab, r, n, none, nil, vb, dim) },
			func() error { return cols.add(ab, r, 0) },
			func() error { return d.download(st.S[i0*n:(i0+r)*n], sb) },
			func() error { return d.download(st.A[i0*n:(i0+r)*n], ab) },
			func() error { return d.download(st.Mu[i0:i0+r], mb) },
			func() error { return d.download(st.RowSum[i0:i0+r], tb) },
			func() error { return d.download(st.RowEntropy[i0:i0+r], eb) },
			func() error { return d.download(st.O[i0*dim:(i0+r)*dim], ob) },
		}
		for _, s := range steps {
			if err := s(); err != nil {
				return err
			}
		}
		d.free(qb, sb, mb, tb, eb, zb, ob)
		parts = append(parts, part{i0, r, ab})
	}
	for _, p := range parts {
		if err := cols.add(p.a, p.r, 1); err != nil {
			return err
		}
	}
	return cols.finish(st.Salience, st.KeyEntropy)
}

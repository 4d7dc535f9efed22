// weighted: bin mass and weighted values (kernel.BinMass), and with
// use_idx == 0 the plain product a * v (kernel.MatMul):
//   z[i]   = sum_t a[i, j_t]
//   y[i,c] = sum_t a[i, j_t] * v[j_t, c]
// for the m x n attention a, the key list j_0, j_1, ... (idx, cnt entries;
// or all n keys in order) and the n x d values v. Both sums run in the order
// of the key list, as in the Go kernel. A workgroup takes R = 4 rows and 64
// output columns (workgroup_id.y picks the column block); the 64 attention
// weights of each step are staged in workgroup memory.
struct Params {
  m: u32,
  n: u32,
  d: u32,
  cnt: u32,
  use_idx: u32,
  _p0: u32,
  _p1: u32,
  _p2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read> idx: array<u32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read_write> z: array<f32>;
@group(0) @binding(5) var<storage, read_write> y: array<f32>;

const R: u32 = 4u;
const B: u32 = 64u;
var<workgroup> at: array<array<f32, 64>, 4>;
var<workgroup> jt: array<u32, 64>;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) w: vec3<u32>) {
  let t = l.x;
  let i0 = w.x * R;
  let c = w.y * B + t;
  var acc = array<f32, 4>(0.0, 0.0, 0.0, 0.0);
  var zs = array<f32, 4>(0.0, 0.0, 0.0, 0.0);
  for (var t0 = 0u; t0 < p.cnt; t0 += B) {
    let nt = min(B, p.cnt - t0);
    // Stage the key indices and the R rows' weights of this step.
    var j = t0 + t;
    if (t < nt && p.use_idx != 0u) {
      j = idx[t0 + t];
    }
    jt[t] = j;
    for (var r = 0u; r < R; r++) {
      var x = 0.0;
      if (t < nt && i0 + r < p.m) {
        x = a[(i0 + r) * p.n + j];
      }
      at[r][t] = x;
    }
    workgroupBarrier();
    for (var u = 0u; u < nt; u++) {
      var vv = 0.0;
      if (c < p.d) {
        vv = v[jt[u] * p.d + c];
      }
      for (var r = 0u; r < R; r++) {
        let x = at[r][u];
        acc[r] += x * vv;
        zs[r] += x;
      }
    }
    workgroupBarrier();
  }
  for (var r = 0u; r < R; r++) {
    let i = i0 + r;
    if (i < p.m) {
      if (c < p.d) {
        y[i * p.d + c] = acc[r];
      }
      if (c == 0u) {
        z[i] = zs[r];
      }
    }
  }
}

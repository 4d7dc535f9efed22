// weighted: bin mass and weighted values (kernel.BinMass), and with
// use_idx == 0 the plain product a * v (kernel.MatMul):
//   z[i]   = sum_t a[i, j_t]
//   y[i,c] = sum_t a[i, j_t] * v[j_t, c]
// for the m x n attention a, the key list j_0, j_1, ... (idx, cnt entries;
// or all n keys in order) and the n x d values v. Both sums run in the order
// of the key list, as in the Go kernel. A workgroup takes R = 4 rows and 64
// output columns (workgroup_id.y picks the column block); each thread keeps
// its 4 rows' sums in registers (no workgroup barriers, which software
// adapters execute slowly).
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

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) w: vec3<u32>) {
  let i0 = w.x * R;
  let c = w.y * B + l.x;
  // Rows past the end repeat the last one (computed, not stored); so do
  // columns past d.
  var row: array<u32, 4>;
  for (var r = 0u; r < R; r++) {
    row[r] = min(i0 + r, p.m - 1u) * p.n;
  }
  let cc = min(c, p.d - 1u);
  var acc = vec4<f32>(0.0);
  var zs = vec4<f32>(0.0);
  for (var t = 0u; t < p.cnt; t++) {
    var j = t;
    if (p.use_idx != 0u) {
      j = idx[t];
    }
    let x = vec4<f32>(a[row[0] + j], a[row[1] + j], a[row[2] + j], a[row[3] + j]);
    acc += x * v[j * p.d + cc];
    zs += x;
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

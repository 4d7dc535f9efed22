// rowentropy: dst[i] = -sum_j a[i,j] ln a[i,j] / ln n for the m rows of the
// m x n attention a, clamped to [0, 1] (kernel.RowEntropy; 1 when n == 1).
// inv_log_n is 1/ln(n) from the CPU (kernel.Log32). One workgroup per row,
// a tree reduction over the workgroup.
struct Params {
  m: u32,
  n: u32,
  inv_log_n: f32,
  _p0: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;

const WG: u32 = 256u;
var<workgroup> red: array<f32, 256>;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) w: vec3<u32>) {
  let i = w.y * 65535u + w.x;
  if (i >= p.m) {
    return;
  }
  let t = l.x;
  var h = 0.0;
  for (var j = t; j < p.n; j += WG) {
    let x = a[i * p.n + j];
    if (x > 0.0) {
      h -= x * log(x);
    }
  }
  red[t] = h;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s = s / 2u) {
    if (t < s) {
      red[t] = red[t] + red[t + s];
    }
    workgroupBarrier();
  }
  if (t == 0u) {
    if (p.n == 1u) {
      dst[i] = 1.0;
    } else {
      dst[i] = clamp(red[0] * p.inv_log_n, 0.0, 1.0);
    }
  }
}

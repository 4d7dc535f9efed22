// softmax: the row softmax of the m x n logits s into a, subtracting each
// row's maximum first (kernel.SoftmaxRows): mu[i] = max_j s[i,j],
// sum[i] = sum_j exp(s[i,j] - mu[i]), a[i,j] = exp(s[i,j] - mu[i]) * (1/sum[i]).
//
// Row i covers its first len(i) columns: all n, or, when causal != 0,
// min(n, base + i + 1) (a causal suffix after base shared keys); the columns
// past len(i) get weight 0. One workgroup per row; the sums are tree
// reductions over the workgroup (a different order than the Go kernel's).
struct Params {
  m: u32,
  n: u32,
  causal: u32,
  base: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> s: array<f32>;
@group(0) @binding(2) var<storage, read_write> a: array<f32>;
@group(0) @binding(3) var<storage, read_write> mu: array<f32>;
@group(0) @binding(4) var<storage, read_write> sum: array<f32>;

const WG: u32 = 256u;
var<workgroup> red: array<f32, 256>;

@compute @workgroup_size(256, 1, 1)
fn main(@builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) w: vec3<u32>) {
  let i = w.y * 65535u + w.x;
  if (i >= p.m) {
    return;
  }
  let t = l.x;
  var len = p.n;
  if (p.causal != 0u) {
    len = min(p.n, p.base + i + 1u);
  }
  let row = i * p.n;
  var mx = -0x1.fffffep+127f; // the lowest finite f32
  for (var j = t; j < len; j += WG) {
    mx = max(mx, s[row + j]);
  }
  red[t] = mx;
  workgroupBarrier();
  for (var h = WG / 2u; h > 0u; h = h / 2u) {
    if (t < h) {
      red[t] = max(red[t], red[t + h]);
    }
    workgroupBarrier();
  }
  mx = red[0];
  workgroupBarrier();
  var acc = 0.0;
  for (var j = t; j < len; j += WG) {
    let e = exp(s[row + j] - mx);
    a[row + j] = e;
    acc += e;
  }
  red[t] = acc;
  workgroupBarrier();
  for (var h = WG / 2u; h > 0u; h = h / 2u) {
    if (t < h) {
      red[t] = red[t] + red[t + h];
    }
    workgroupBarrier();
  }
  let total = red[0];
  let inv = 1.0 / total;
  for (var j = t; j < p.n; j += WG) {
    if (j < len) {
      a[row + j] = a[row + j] * inv;
    } else {
      a[row + j] = 0.0;
    }
  }
  if (t == 0u) {
    mu[i] = mx;
    sum[i] = total;
  }
}

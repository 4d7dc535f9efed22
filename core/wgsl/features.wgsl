// features: the summary features of the least-squares fit (HAE-OLS.md §3),
// f[i,t] = exp(scale * dot(q[i], khat[t]) - mu[i]) for the m calibration
// rows q (m x d), the ns summary keys khat (ns x d) and the row maxima mu of
// the calibration logits. One thread per feature; the dot product is summed
// in index order, as kernel.Logits does.
struct Params {
  m: u32,
  ns: u32,
  d: u32,
  scale: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> khat: array<f32>;
@group(0) @binding(3) var<storage, read> mu: array<f32>;
@group(0) @binding(4) var<storage, read_write> f: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let e = g.y * 65535u * 64u + g.x;
  if (e >= p.m * p.ns) {
    return;
  }
  let i = e / p.ns;
  let t = e % p.ns;
  var acc = 0.0;
  for (var c = 0u; c < p.d; c++) {
    acc += q[i * p.d + c] * khat[t * p.d + c];
  }
  f[e] = exp(p.scale * acc - mu[i]);
}

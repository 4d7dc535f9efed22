// logits: S[i,j] = scale * dot(q[i], k[j]) (+ bias[j] when has_bias != 0)
// for the m query rows q (m x d) and the n key rows k (n x d), S is m x n.
//
// Same math as kernel.Logits: each thread sums its dot product in index
// order c = 0, 1, ..., d-1 (tiles of 16 columns, zero padded), then
// multiplies by scale, then adds the bias (as Partial.AddKeys does).
struct Params {
  m: u32,
  n: u32,
  d: u32,
  has_bias: u32,
  scale: f32,
  _p0: u32,
  _p1: u32,
  _p2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> bias: array<f32>;
@group(0) @binding(4) var<storage, read_write> s: array<f32>;

const T: u32 = 16u;
var<workgroup> qt: array<array<f32, 17>, 16>; // [row][column]
var<workgroup> kt: array<array<f32, 17>, 16>; // [key][column]

@compute @workgroup_size(16, 16, 1)
fn main(@builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) w: vec3<u32>) {
  let i = w.y * T + l.y;
  let j = w.x * T + l.x;
  let kr = w.x * T + l.y; // the key row this thread loads
  var acc = 0.0;
  for (var c0 = 0u; c0 < p.d; c0 += T) {
    let c = c0 + l.x;
    var qv = 0.0;
    if (i < p.m && c < p.d) {
      qv = q[i * p.d + c];
    }
    qt[l.y][l.x] = qv;
    var kv = 0.0;
    if (kr < p.n && c < p.d) {
      kv = k[kr * p.d + c];
    }
    kt[l.y][l.x] = kv;
    workgroupBarrier();
    let cn = min(T, p.d - c0);
    for (var cc = 0u; cc < cn; cc++) {
      acc += qt[l.y][cc] * kt[l.x][cc];
    }
    workgroupBarrier();
  }
  if (i < p.m && j < p.n) {
    var v = p.scale * acc;
    if (p.has_bias != 0u) {
      v = v + bias[j];
    }
    s[i * p.n + j] = v;
  }
}

// logits: S[i,j] = scale * dot(q[i], k[j]) (+ bias[j] when has_bias != 0)
// for the m query rows q (m x d) and the n key rows k (n x d), S is m x n.
//
// Same math as kernel.Logits: each dot product is summed in index order
// c = 0, 1, ..., d-1, then multiplied by scale, then the bias is added (as
// Partial.AddKeys does). Each thread computes a 4 x 4 block of S in
// registers (a workgroup of 8 x 8 threads covers 32 x 32), reading q and k
// straight from memory: no workgroup barriers, which software adapters
// (llvmpipe, SwiftShader) execute slowly.
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

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) w: vec3<u32>) {
  let i0 = w.y * 32u + l.y * 4u;
  let j0 = w.x * 32u + l.x * 4u;
  if (i0 >= p.m || j0 >= p.n) {
    return;
  }
  // Rows and keys past the end repeat the last one (computed, not stored).
  var qi: array<u32, 4>;
  var kj: array<u32, 4>;
  for (var r = 0u; r < 4u; r++) {
    qi[r] = min(i0 + r, p.m - 1u) * p.d;
    kj[r] = min(j0 + r, p.n - 1u) * p.d;
  }
  var acc: array<vec4<f32>, 4>; // acc[r][c]: row i0+r, key j0+c
  for (var c = 0u; c < p.d; c++) {
    let kv = vec4<f32>(k[kj[0] + c], k[kj[1] + c], k[kj[2] + c], k[kj[3] + c]);
    for (var r = 0u; r < 4u; r++) {
      acc[r] += q[qi[r] + c] * kv;
    }
  }
  for (var r = 0u; r < 4u; r++) {
    let i = i0 + r;
    if (i >= p.m) {
      break;
    }
    for (var c = 0u; c < 4u; c++) {
      let j = j0 + c;
      if (j >= p.n) {
        break;
      }
      var v = p.scale * acc[r][c];
      if (p.has_bias != 0u) {
        v = v + bias[j];
      }
      s[i * p.n + j] = v;
    }
  }
}

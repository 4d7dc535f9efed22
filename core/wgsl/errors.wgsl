// errors: the per-row sums behind the error metrics of HAE-OLS.md §5 for
// the m x d outputs o and references r: out[4i..4i+3] =
// (sum (o-r)^2, sum r^2, sum o^2, sum o*r), summed in column order. The
// CPU turns them into the relative error sqrt(dd/rr) and the cosine.
struct Params {
  m: u32,
  d: u32,
  _p0: u32,
  _p1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> o: array<f32>;
@group(0) @binding(2) var<storage, read> r: array<f32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  let i = g.y * 65535u * 64u + g.x;
  if (i >= p.m) {
    return;
  }
  var dd = 0.0;
  var rr = 0.0;
  var oo = 0.0;
  var orr = 0.0;
  for (var c = 0u; c < p.d; c++) {
    let x = o[i * p.d + c];
    let y = r[i * p.d + c];
    dd += (x - y) * (x - y);
    rr += y * y;
    oo += x * x;
    orr += x * y;
  }
  out[4u * i] = dd;
  out[4u * i + 1u] = rr;
  out[4u * i + 2u] = oo;
  out[4u * i + 3u] = orr;
}

// columns: the column reductions of the m x n attention a (HAE-OLS.md §1):
// salience (the column mean) and the normalized key entropy.
//
// One thread per column, rows summed in order 0, 1, ..., m-1: the order of
// kernel.ColMean and kernel.KeyEntropy. The rows may arrive in several
// chunks (row blocks of a matrix too large for one binding): colsum and
// entropy add each chunk's rows to cs, then terms of each chunk to ent;
// finish writes the results. inv_log_m is 1/ln(m) of the whole matrix,
// computed on the CPU with kernel.Log32, and inv_m is 1/m.
struct Params {
  m: u32,      // rows in this chunk
  n: u32,
  whole_m: u32, // rows in the whole matrix
  _p0: u32,
  inv_m: f32,
  inv_log_m: f32,
  _p1: u32,
  _p2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<f32>;
@group(0) @binding(2) var<storage, read_write> cs: array<f32>;
@group(0) @binding(3) var<storage, read_write> ent: array<f32>;
@group(0) @binding(4) var<storage, read_write> sal: array<f32>;
@group(0) @binding(5) var<storage, read_write> ke: array<f32>;

fn col(g: vec3<u32>) -> u32 {
  return g.y * 65535u * 64u + g.x;
}

@compute @workgroup_size(64, 1, 1)
fn colsum(@builtin(global_invocation_id) g: vec3<u32>) {
  let j = col(g);
  if (j >= p.n) {
    return;
  }
  var c = cs[j];
  for (var i = 0u; i < p.m; i++) {
    c += a[i * p.n + j];
  }
  cs[j] = c;
}

@compute @workgroup_size(64, 1, 1)
fn entropy(@builtin(global_invocation_id) g: vec3<u32>) {
  let j = col(g);
  if (j >= p.n) {
    return;
  }
  let c = cs[j];
  var h = ent[j];
  for (var i = 0u; i < p.m; i++) {
    let x = a[i * p.n + j] / c;
    if (x > 0.0) {
      h -= x * log(x);
    }
  }
  ent[j] = h;
}

@compute @workgroup_size(64, 1, 1)
fn finish(@builtin(global_invocation_id) g: vec3<u32>) {
  let j = col(g);
  if (j >= p.n) {
    return;
  }
  let c = cs[j];
  sal[j] = c * p.inv_m;
  if (p.whole_m == 1u || !(c > 0.0)) {
    ke[j] = 1.0;
  } else {
    ke[j] = clamp(ent[j] * p.inv_log_m, 0.0, 1.0);
  }
}

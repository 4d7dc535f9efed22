#!/usr/bin/python3
"""analyze_numpy.py [ROUNDS]: haeols's one-head analysis (core.Analyze on
the CPU, as BenchmarkAnalyze runs it: n = 1024 cached keys, d = 64, the
last w = 128 of them as calibration queries, 64 probe queries) in NumPy,
vectorised, on one thread, for scripts/bench-numpy.sh to time against
haeols. It computes what Analyze does: the calibration logits, softmax,
outputs, attention mass per key (column mean), key entropy and row entropy;
then each probe query's logits over the prefix and its output over the
prefix and the causal suffix. It prints the fastest of ROUNDS timed runs in
ms (each the mean of a batch), after a check that the numbers are sane.
The data is random: the timing does not depend on its values.

analyze_numpy.py --blas prints the BLAS that NumPy's products run on (the
library file mapped into this process after a product): OpenBLAS, BLIS,
MKL, "reference" for Netlib's unoptimised libblas, or the file's path."""

import os
import sys

for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[v] = "1"

import time

import numpy as np

N, D, W, T = 1024, 64, 128, 64
TINY = np.finfo(np.float32).tiny


def analyze(q, k, v, scale):
    """Returns the analysis of one head: q, k, v are (N+T, D) float32."""
    kp, vp = k[:N], v[:N]
    qc = q[N - W:N]
    s = (qc @ kp.T) * scale
    mx = s.max(axis=1, keepdims=True)
    e = np.exp(s - mx)
    a = e / e.sum(axis=1, keepdims=True)
    o = a @ vp
    salience = a.mean(axis=0)
    col = a.sum(axis=0, keepdims=True)
    p = a / col
    # x ln x with 0 ln 0 = 0 (ln of the smallest normal float32 is finite)
    key_ent = -(p * np.log(np.maximum(p, TINY))).sum(axis=0) / np.float32(np.log(W))
    row_ent = -(a * np.log(np.maximum(a, TINY))).sum(axis=1) / np.float32(np.log(N))
    # probes: logits over the prefix, then attention over prefix + causal suffix
    qp = q[N:]
    sp = (qp @ kp.T) * scale
    ss = (qp @ k[N:].T) * scale
    ss = np.where(np.tri(T, dtype=bool), ss, -np.inf)
    full = np.concatenate([sp, ss], axis=1)
    mx = full.max(axis=1, keepdims=True)
    e = np.exp(full - mx)
    op = (e @ v) / e.sum(axis=1, keepdims=True)
    return o, salience, key_ent, row_ent, sp, op


def blas():
    """Names the BLAS library this process has mapped (after a product)."""
    a = np.ones((64, 64), dtype=np.float32)
    a @ a
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            name = os.path.basename(path)
            if "blas" in name or "mkl" in name or "blis" in name:
                libs.add(os.path.realpath(path))
    for lib in sorted(libs):
        low = lib.lower()
        for key, label in (("openblas", "OpenBLAS"), ("blis", "BLIS"), ("mkl", "MKL")):
            if key in low:
                return label
    for lib in sorted(libs):
        if "/blas/" in lib:
            return "reference"
    return ", ".join(sorted(libs)) or "unknown"


def main():
    if sys.argv[1:] == ["--blas"]:
        print(blas())
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    rng = np.random.default_rng(42)
    q, k, v = (rng.standard_normal((N + T, D), dtype=np.float32) for _ in range(3))
    scale = np.float32(1 / np.sqrt(D))
    o, sal, ke, re, sp, op = analyze(q, k, v, scale)
    assert o.dtype == np.float32 and op.dtype == np.float32
    assert np.all(np.isfinite(op)) and abs(float(sal.sum()) - 1) < 1e-3
    assert np.all((ke >= -1e-5) & (ke <= 1 + 1e-5)) and np.all((re >= -1e-5) & (re <= 1 + 1e-5))
    batch = 20
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(batch):
            analyze(q, k, v, scale)
        best = min(best, (time.perf_counter() - t0) / batch)
    print(f"{best * 1e3:.4f}")


if __name__ == "__main__":
    main()

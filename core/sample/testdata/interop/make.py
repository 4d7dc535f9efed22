"""Writes the interop test files of core/sample with NumPy (run once, commit
the output): python3 make.py

Values are exact in float16 and bfloat16, so the Go test can recompute them:
element i (flat, C order) of tensor t is pattern(t, i) below. Attention rows are
probabilities: 1/2 in one column that moves from row to row, 1/16 elsewhere.
"""
import json
import struct
import zipfile

import numpy as np

OFFSET = {"q": 0, "k": 1, "v": 2, "attn": 3}


def pattern(name, shape, dtype):
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    if name == "attn":
        n = shape[-1]  # 9: eight times 1/16 plus 1/2 sum to 1
        x = np.where(i % n == (i // n * 5 + 3) % n, 0.5, 1 / 16)
    else:
        x = ((i * 7 + OFFSET[name] * 5) % 17 - 8) / 4.0  # in [-2, 2], step 1/4
    return x.reshape(shape).astype(dtype)


def bf16_bytes(x):
    b = np.ascontiguousarray(x, dtype="<f4").view("<u4")
    b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype("<u2")
    return b.tobytes()


L, H, HKV, N, D = 2, 4, 2, 9, 3
qkv = {
    "q": (L, H, N, D),
    "k": (L, HKV, N, D),
    "v": (L, HKV, N, D),
}

# .npy attention tensors, every rank and dtype, both byte orders, v1/v2/v3.
np.save("attn_nn_f4.npy", pattern("attn", (N, N), "<f4"))
np.save("attn_hnn_f2.npy", pattern("attn", (H, N, N), "<f2"))
np.save("attn_lhnn_be_f8.npy", pattern("attn", (L, H, N, N), ">f8"))
with open("attn_v2.npy", "wb") as f:
    np.lib.format.write_array(f, pattern("attn", (H, N, N), "<f4"), version=(2, 0))
with open("attn_v3.npy", "wb") as f:
    np.lib.format.write_array(f, pattern("attn", (H, N, N), "<f4"), version=(3, 0))

# .npz: stored (np.savez) and deflated (np.savez_compressed).
np.savez("qkv_f4.npz", **{k: pattern(k, s, "<f4") for k, s in qkv.items()})
arrs = {k: pattern(k, s, "<f2") for k, s in qkv.items()}
arrs["attn"] = pattern("attn", (L, H, N, N), "<f8")
np.savez_compressed("qkv_attn_mixed_deflated.npz", **arrs)

# safetensors, laid out as the reference library does: header JSON, padded
# with spaces to 8 bytes, tensors ordered by name.
def safetensors(path, dtype, tensors, metadata):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        shape = tensors[name]
        x = pattern(name, shape, "<f4")
        if dtype == "F32":
            b = x.tobytes()
        elif dtype == "F16":
            b = x.astype("<f2").tobytes()
        elif dtype == "F64":
            b = x.astype("<f8").tobytes()
        else:
            b = bf16_bytes(x)
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


meta = {
    "haeols.format": "1",
    "model": "numpy-pattern",
    "source": "testdata/interop/make.py",
    "prefix": "7",
    "scale": "0.5",
    "tokens": json.dumps(["t%d" % i for i in range(N)]),
    "needles": "[1, 4]",
    "needle_probes": "[0]",
    "description": "pattern(t, i) = ((7i + 5 offset(t)) mod 17 - 8) / 4",
    "made_by": "make.py",
}
safetensors("qkv_bf16.safetensors", "BF16", qkv, meta)
safetensors("qkv_attn_f16.safetensors", "F16", dict(qkv, attn=(L, H, N, N)), {"haeols.format": "1"})
safetensors("attn_f64.safetensors", "F64", {"attn": (H, N, N)}, {})

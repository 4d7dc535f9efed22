#!/usr/bin/env bash
# gpu-check.sh: the prepared device check of docs/GPU.md, for a machine with a
# real GPU (the `device` tool of this project's sessions). It runs
# `haeols verify -require-gpu` on the shipped samples and on generated
# prefixes of 1K to 64K tokens, and the CPU-vs-GPU benchmarks, writing
# everything under $OUT (or /tmp/gpu-check).
#
# Build on the development machine first (`make gpu-kit`: bin/gpukit/haeols
# and bin/gpukit/gpu.test, both cgo binaries with wgpu-native linked in), and
# bring the Vulkan loader as .gl/*.deb (see the device README); then run
#   bash scripts/gpu-check.sh
# with bin/gpukit and .gl carried.
set -u
out=${OUT:-/tmp/gpu-check}
sizes=${SIZES:-1K,4K,16K,64K} # SIZES=1K for a quick try on a software adapter
mkdir -p "$out"
if ! ldconfig -p | grep -q libvulkan; then
	for f in .gl/*.deb; do [ -e "$f" ] && dpkg -x "$f" /; done
	ldconfig
fi
icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
[ -e "$icd" ] && export VK_DRIVER_FILES=$icd
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/nvidia-smi.txt" 2>&1
{
	echo "== shipped samples"
	bin/gpukit/haeols verify -require-gpu -backend vulkan -methods hae-ols,topk,quant,full -ratios 0.1,0.3,1 \
		samples/default.safetensors samples/needle.safetensors samples/stories260K.safetensors
	echo "exit $?"
} > "$out/verify.txt" 2>&1
bin/gpukit/haeols verify -require-gpu -backend vulkan -sizes "$sizes" -methods hae-ols,topk,full -ratios 0.3,1 -json > "$out/verify-sizes.json" 2> "$out/verify-sizes.err"
echo "verify -sizes $sizes: exit $?" >> "$out/verify.txt"
python3 - "$out/verify-sizes.json" >> "$out/verify.txt" 2>&1 <<'PY' || true
import json, sys
d = json.load(open(sys.argv[1]))
print("adapter:", d.get("adapter"), "pass:", d["pass"])
for r in d["results"]:
    worst = max((k.get("gpu_tol") or 0, k["kernel"], k["output"]) for k in r["kernels"])
    print("n=%d: %.1f s, pass %s, largest GPU deviation %.3f of tolerance (%s %s)" % (r["n"], r["seconds"], r["pass"], *worst))
PY
HAEOLS_BENCH_SIZES=$sizes bin/gpukit/gpu.test -test.run '^$' -test.bench . -test.benchtime 5x > "$out/bench.txt" 2>&1
tail -n 30 "$out/verify.txt" "$out/bench.txt"

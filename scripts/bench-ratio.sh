#!/usr/bin/env bash
# bench-ratio.sh [-noasm] [ROUNDS]: the kernel and one-head benchmarks natively and
# in wasm (Node) side by side, from test binaries built as the Makefile
# builds (GOEXPERIMENT=simd; nojsonv2 too in wasm), the native and the wasm binary of each
# benchmark run alternately ROUNDS times (default 3) so that the machine's
# noise hits both alike. Prints each benchmark's fastest native and wasm
# ms/op and wasm/native, the wasm build's throughput as a share of the
# native build's (1 is as fast; the goal is at least 0.5). In wasm each
# round is the third run of its process, when V8 has optimised the code.
# With -noasm a third build runs alongside, wasm without the SIMD128
# assembly of core/kernel/simd_wasm.s (build tag wasmnoasm: simd.go's
# archsimd loops only), and asm/noasm is how much faster the assembly
# makes each benchmark (noasm ms / wasm ms).
# `make bench-ratio` runs it; docs/PERFORMANCE.md gives one run.
set -euo pipefail
noasm=
if [ "${1:-}" = -noasm ]; then noasm=1; shift; fi
rounds=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOTOOLCHAIN=${GOTOOLCHAIN:-auto} GOEXPERIMENT=${GOEXPERIMENT:-simd}
. "$root/scripts/benchlib.sh"

cd "$root"
for p in kernel core; do
	pkg=./core/$p/
	[ $p = core ] && pkg=./core/
	go test -c -o "$tmp/$p.test" $pkg
	GOEXPERIMENT=$GOEXPERIMENT,nojsonv2 GOOS=js GOARCH=wasm go test -c -o "$tmp/$p.wasm" $pkg
	[ -z "$noasm" ] || GOEXPERIMENT=$GOEXPERIMENT,nojsonv2 GOOS=js GOARCH=wasm go test -tags wasmnoasm -c -o "$tmp/$p-noasm.wasm" $pkg
done
cd "$tmp"

# run pkg bench iters [wasm]: ns/op of one run (benchlib.sh)
run() { if [ -n "${4:-}" ]; then bench_ns "$tmp/$1.wasm" "$2" "$3"; else bench_ns "$tmp/$1.test" "$2" "$3"; fi; }

if [ -n "$noasm" ]; then
	printf '%-36s %12s %12s %12s %12s %12s\n' benchmark 'native ms' 'wasm ms' 'wasm/native' 'noasm ms' 'asm/noasm'
else
	printf '%-36s %12s %12s %12s\n' benchmark 'native ms' 'wasm ms' 'wasm/native'
fi
# row pkg bench native-iters wasm-iters
row() {
	local n="" w="" x=""
	for _ in $(seq "$rounds"); do
		n="$n $(run "$1" "$2" "$3")"
		w="$w $(run "$1" "$2" "$4" wasm)"
		[ -z "$noasm" ] || x="$x $(run "$1-noasm" "$2" "$4" wasm)"
	done
	echo "$n | $w | $x" | awk -v name="$2" '{
		split($0, p, "|"); nn = split(p[1], a, " "); nw = split(p[2], b, " "); nx = split(p[3], c, " ")
		mn = a[1]; for (i = 1; i <= nn; i++) if (a[i] < mn) mn = a[i]
		mw = b[1]; for (i = 1; i <= nw; i++) if (b[i] < mw) mw = b[i]
		gsub(/[\^$]/, "", name)
		printf "%-36s %12.4f %12.4f %12.2f", name, mn / 1e6, mw / 1e6, mn / mw
		if (nx > 0) { mx = c[1]; for (i = 1; i <= nx; i++) if (c[i] < mx) mx = c[i]; printf " %12.4f %12.2f", mx / 1e6, mx / mw }
		printf "\n" }'
}

row kernel '^BenchmarkLogits$/m=128' 300 60
row kernel '^BenchmarkMatMul$/m=128' 300 60
row kernel '^BenchmarkMatMul4$/rows=768/n=256/nb=1$' 2000 400
row kernel '^BenchmarkMatMul4$/rows=768/n=256/nb=32$' 100 20
row kernel '^BenchmarkPartialAddKeys$/m=128' 200 40
row kernel '^BenchmarkSoftmaxRows$/m=128' 300 60
row kernel '^BenchmarkRowEntropy$/m=128' 300 60
row kernel '^BenchmarkKeyEntropy$/m=128' 300 60
row kernel '^BenchmarkExp32$' 20000 5000
row core '^BenchmarkAnalyze$' 40 12
row core '^BenchmarkFirstHAEOLS$' 40 12
row core '^BenchmarkReplanHAEOLS$' 150 30

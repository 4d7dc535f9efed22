#!/usr/bin/env bash
# bench-ratio.sh [-noasm] [ROUNDS]: the kernel and one-head benchmarks natively and
# in wasm (Node) side by side, from test binaries built as the Makefile
# builds (GOEXPERIMENT=simd; nojsonv2 too in wasm), the native and the wasm binary of each
# benchmark run alternately ROUNDS times (default 3) so that the machine's
# noise hits both alike. Prints each benchmark's fastest native and wasm
# ms/op and wasm/native, the wasm build's throughput as a share of the
# native build's (1 is as fast; the goal is at least 0.5). In wasm each
# round is the third run of its process, when V8 has optimised the code.
# On a CPU with AVX-512 the native binary also runs without its AVX-512
# blocks (GODEBUG=cpu.avx512f=off: 8-lane AVX2 only), and wasm/AVX2 is the
# wasm build against that. With -noasm a further build runs alongside, wasm without the SIMD128
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

# run pkg bench iters [wasm|avx2]: ns/op of one run (benchlib.sh); avx2 is
# the native binary without its AVX-512 blocks (GODEBUG=cpu.avx512f=off)
run() {
	case ${4:-} in
	wasm) bench_ns "$tmp/$1.wasm" "$2" "$3" ;;
	avx2) GODEBUG=cpu.avx512f=off bench_ns "$tmp/$1.test" "$2" "$3" ;;
	*) bench_ns "$tmp/$1.test" "$2" "$3" ;;
	esac
}

# On a CPU with AVX-512 the native build runs 16-lane blocks in its two
# products; a second native column runs it without them (AVX2, 8 lanes).
avx2=
if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then avx2=1; fi

hdr="$(printf '%-36s %12s' benchmark 'native ms')"
[ -z "$avx2" ] || hdr="$hdr$(printf ' %12s' 'AVX2 ms')"
hdr="$hdr$(printf ' %12s %12s' 'wasm ms' 'wasm/native')"
[ -z "$avx2" ] || hdr="$hdr$(printf ' %12s' 'wasm/AVX2')"
[ -z "$noasm" ] || hdr="$hdr$(printf ' %12s %12s' 'noasm ms' 'asm/noasm')"
echo "$hdr"
# row pkg bench native-iters wasm-iters
row() {
	local n="" a="" w="" x=""
	for _ in $(seq "$rounds"); do
		n="$n $(run "$1" "$2" "$3")"
		[ -z "$avx2" ] || a="$a $(run "$1" "$2" "$3" avx2)"
		w="$w $(run "$1" "$2" "$4" wasm)"
		[ -z "$noasm" ] || x="$x $(run "$1-noasm" "$2" "$4" wasm)"
	done
	echo "$n | $a | $w | $x" | awk -v name="$2" '
	function least(s,   v, k, i, m) { k = split(s, v, " "); m = v[1]; for (i = 1; i <= k; i++) if (v[i] < m) m = v[i]; return k ? m : 0 }
	{
		split($0, p, "|"); mn = least(p[1]); ma = least(p[2]); mw = least(p[3]); mx = least(p[4])
		gsub(/[\^$]/, "", name)
		printf "%-36s %12.4f", name, mn / 1e6
		if (ma > 0) printf " %12.4f", ma / 1e6
		printf " %12.4f %12.2f", mw / 1e6, mn / mw
		if (ma > 0) printf " %12.2f", ma / mw
		if (mx > 0) printf " %12.4f %12.2f", mx / 1e6, mx / mw
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

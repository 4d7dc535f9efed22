#!/usr/bin/env bash
# bench-ab.sh OLD_REV [ROUNDS]: the kernel and one-head benchmarks of the
# commit OLD_REV and of the working tree, natively and in wasm (Node), the
# two builds' test binaries run alternately ROUNDS times (default 5) so that
# the machine's noise hits both alike. Prints each benchmark's ms/op per
# round and the ratio of the fastest rounds (old/new: above 1 is faster
# now); in wasm each round is the third run of its process (see run). Each
# build uses the toolchain its go.mod names and the GOEXPERIMENT its
# Makefile sets, as `make` builds it. docs/PERFORMANCE.md gives one
# run.
set -euo pipefail
old=${1:?usage: scripts/bench-ab.sh OLD_REV [ROUNDS]}
rounds=${2:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOTOOLCHAIN=${GOTOOLCHAIN:-auto}
. "$root/scripts/benchlib.sh"

mkdir "$tmp/old"
git -C "$root" archive "$old" | tar -x -C "$tmp/old"
build() { # dir name experiment
	(cd "$1" && for p in kernel core; do
		pkg=./core/$p/
		[ $p = core ] && pkg=./core/
		GOEXPERIMENT=$3 go test -c -o "$tmp/$2-$p.test" $pkg
		GOEXPERIMENT=$3 GOOS=js GOARCH=wasm go test -c -o "$tmp/$2-$p.wasm" $pkg
	done)
}
# Each tree with the experiment its Makefile sets (none before the vector
# kernels).
experiment() { sed -n 's/^GOEXPERIMENT ?= *//p' "$1/Makefile" 2>/dev/null | head -1; }
build "$tmp/old" old "$(experiment "$tmp/old")"
build "$root" new "$(experiment "$root")"

# run build pkg bench iters wasm: ns/op of one run (benchlib.sh)
run() { if [ -n "${5:-}" ]; then bench_ns "$tmp/$1-$2.wasm" "$3" "$4"; else bench_ns "$tmp/$1-$2.test" "$3" "$4"; fi; }

# ab pkg bench iters [wasm]
ab() {
	local o="" n=""
	for _ in $(seq "$rounds"); do
		o="$o $(run old "$1" "$2" "$3" "${4:-}")"
		n="$n $(run new "$1" "$2" "$3" "${4:-}")"
	done
	echo "$o | $n" | awk -v name="$2${4:+ (wasm)}" '{
		split($0, p, "|"); no = split(p[1], a, " "); nn = split(p[2], b, " ")
		mo = a[1]; for (i = 1; i <= no; i++) if (a[i] < mo) mo = a[i]
		mn = b[1]; for (i = 1; i <= nn; i++) if (b[i] < mn) mn = b[i]
		printf "%-34s old ms/op", name; for (i = 1; i <= no; i++) printf " %.2f", a[i] / 1e6
		printf " | new"; for (i = 1; i <= nn; i++) printf " %.2f", b[i] / 1e6
		printf " | fastest %.2f -> %.2f ms, old/new %.2f\n", mo / 1e6, mn / 1e6, mo / mn }'
}

cd "$tmp"
ab kernel '^BenchmarkLogits$/m=128' 300
ab kernel '^BenchmarkMatMul$/m=128' 300
ab core '^BenchmarkAnalyze$' 40
ab core '^BenchmarkReplanHAEOLS$' 150
ab kernel '^BenchmarkLogits$/m=128' 60 wasm
ab kernel '^BenchmarkMatMul$/m=128' 60 wasm
ab core '^BenchmarkAnalyze$' 12 wasm
ab core '^BenchmarkReplanHAEOLS$' 30 wasm

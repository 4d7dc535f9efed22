#!/usr/bin/env bash
# bench-numpy.sh [ROUNDS]: haeols's one-head analysis (BenchmarkAnalyze,
# natively as the Makefile builds, GOMAXPROCS=1) against the same analysis
# in NumPy on one thread (scripts/analyze_numpy.py), run alternately ROUNDS
# times (default 3). Prints the fastest of each in ms and NumPy/haeols
# (above 1: haeols is faster; the goal is at least 2) with the BLAS NumPy
# ran on. Needs Debian's python3-numpy; the BLAS is whichever libblas.so.3
# the system picks, and the goal is set against OpenBLAS
# (libopenblas0-pthread): on Netlib's reference BLAS, which python3-numpy
# alone installs, NumPy is several times slower and the script says so.
set -euo pipefail
rounds=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export GOTOOLCHAIN=${GOTOOLCHAIN:-auto} GOEXPERIMENT=${GOEXPERIMENT:-simd}
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if ! "$py" -c 'import numpy' 2>/dev/null; then
	echo "bench-numpy: $py has no numpy (apt-get install python3-numpy)" >&2
	exit 1
fi
blas=$("$py" "$root/scripts/analyze_numpy.py" --blas)
if [ "$blas" = reference ]; then
	echo "bench-numpy: NumPy runs on Netlib's reference BLAS, not the OpenBLAS the goal is set against (apt-get install libopenblas0-pthread)" >&2
fi
(cd "$root" && go test -c -o "$tmp/core.test" ./core/)
h="" np=""
for _ in $(seq "$rounds"); do
	h="$h $(GOMAXPROCS=1 "$tmp/core.test" -test.run '^$' -test.bench '^BenchmarkAnalyze$' -test.benchtime 40x | awk '/^Benchmark/ { print $3 / 1e6; exit }')"
	np="$np $("$py" "$root/scripts/analyze_numpy.py" 3)"
done
echo "$h | $np" | awk -v blas="$blas" '{
	split($0, p, "|"); nh = split(p[1], a, " "); nn = split(p[2], b, " ")
	mh = a[1]; for (i = 1; i <= nh; i++) if (a[i] < mh) mh = a[i]
	mn = b[1]; for (i = 1; i <= nn; i++) if (b[i] < mn) mn = b[i]
	printf "one-head analysis (n=1024, d=64, w=128, 64 probes, one core): haeols %.3f ms, NumPy (%s) %.3f ms, NumPy/haeols %.2f\n", mh, blas, mn, mn / mh }'

# benchlib.sh, sourced by the bench-*.sh scripts once they have set root
# (the repository): Node runs wasm with the wasm_exec of the toolchain that
# go.mod names.
bench_wasm_exec=$(cd "$root" && go env GOROOT)/lib/wasm/go_js_wasm_exec
#
# bench_ns BINARY BENCH ITERS: ns/op of one run of a test binary's
# benchmark BENCH for ITERS iterations. A BINARY ending in .wasm runs in
# Node (go_js_wasm_exec of the toolchain), three times in one process, and
# gives the third, when V8 has optimised the code (the first runs are
# mostly its baseline code, whose speed says little about the kernels).
bench_ns() {
	case $1 in
	*.wasm)
		"$bench_wasm_exec" "$1" -test.run '^$' -test.bench "$2" -test.benchtime "$3x" -test.count 3 |
			awk '/^Benchmark/ { v = $3 } END { print v }' ;;
	*)
		"$1" -test.run '^$' -test.bench "$2" -test.benchtime "$3x" | awk '/^Benchmark/ { print $3; exit }' ;;
	esac
}

# haeols — make targets. `make test` is what CI runs (.ci/run).
GO      ?= go
WASMEXEC = $(shell $(GO) env GOROOT)/lib/wasm/go_js_wasm_exec
# Packages whose tests also run under GOOS=js GOARCH=wasm (Node).
WASM_PKGS = ./core/...
BIN      = bin/haeols

.PHONY: all build test test-native test-wasm lint bench bench-wasm samples fuzz run clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/haeols

## test: vet, formatting, native tests, wasm tests
test: lint test-native test-wasm

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

test-native:
	$(GO) test -count=1 ./...

test-wasm:
	GOOS=js GOARCH=wasm $(GO) test -count=1 -exec="$(WASMEXEC)" $(WASM_PKGS)

## bench: kernels (GFLOP/s) and one head end to end (ms), native
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1s ./core/kernel/ ./core/solve/ ./core/

## bench-wasm: the same benchmarks under Node, for the native/wasm ratio
bench-wasm:
	GOOS=js GOARCH=wasm $(GO) test -run '^$$' -bench . -benchtime 1s -exec="$(WASMEXEC)" ./core/kernel/ ./core/

## samples: regenerate the shipped samples byte for byte
samples:
	$(GO) run ./cmd/haeols gen -preset default -o samples/default.safetensors
	$(GO) run ./cmd/haeols gen -preset needle -o samples/needle.safetensors
	$(GO) run ./cmd/haeols gen -preset induction -o samples/induction.safetensors

## fuzz: a short run of every fuzz target
fuzz:
	for t in FuzzDecodeSafetensors FuzzDecodeNPZ FuzzDecodeNPY; do \
		$(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime 20s ./core/sample/ || exit 1; done

## run: the CLI on the built-in default sample
run:
	$(GO) run ./cmd/haeols run

clean:
	rm -rf bin

# haeols — make targets. `make test` is what CI runs (.ci/run).
GO      ?= go
# go.mod names the toolchain (go1.27.3; see go.mod for why not 1.27.4): an older go fetches it from the
# module proxy unless GOTOOLCHAIN says otherwise (some installs set
# GOTOOLCHAIN=local in their go.env; the Makefile asks for auto).
GOTOOLCHAIN ?= auto
# The vector kernels (core/kernel, core/solve) are written with
# simd/archsimd, which Go 1.27 builds only under this experiment: SIMD128 in
# wasm, AVX/AVX2 on amd64. Without it the portable loops give the same bits.
GOEXPERIMENT ?= simd
export GOTOOLCHAIN GOEXPERIMENT
# The wasm programs (the site, the wasm tests and benchmarks) also turn off
# the jsonv2 experiment, which Go 1.27 turns on by default: encoding/json
# then has its own implementation instead of running on encoding/json/v2,
# which makes app.wasm and heatmap.wasm about 250 KB gzip smaller each (the
# wire messages are the same bytes). Native builds keep the default:
# chromedp (web/e2e) needs encoding/json/v2.
WASM     = GOOS=js GOARCH=wasm GOEXPERIMENT=$(GOEXPERIMENT),nojsonv2
GOROOT_  = $(shell GOTOOLCHAIN=$(GOTOOLCHAIN) $(GO) env GOROOT)
WASMEXEC = $(GOROOT_)/lib/wasm/go_js_wasm_exec
GOFMT    = $(GOROOT_)/bin/gofmt
# Packages whose tests also run under GOOS=js GOARCH=wasm (Node).
WASM_PKGS = ./core/... ./ui/... ./wasm/worker/ ./wire/
BIN      = bin/haeols

.PHONY: all build test conformance conformance-deps test-native test-wasm test-nocgo test-plain gpu-kit lint bench bench-ratio bench-numpy bench-wasm bench-web samples fuzz fuzz-short fuzz-long run clean web serve test-e2e

all: build

build:
	$(GO) build -o $(BIN) ./cmd/haeols

## test: vet, formatting, native tests, wasm tests, a short run of every fuzz target
test: lint test-native test-wasm test-nocgo test-plain fuzz-short

lint:
	@out=$$($(GOFMT) -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(WASM) $(GO) vet $$($(GO) list ./... | grep -v /web/e2e)
	CGO_ENABLED=0 $(GO) vet ./core/... ./cmd/...

# The browser tests (web/e2e) run after the others, on their own: they
# measure the app's latency and main-thread tasks, which other test binaries
# competing for the same cores would distort.
test-native: conformance-deps
	$(GO) test -count=1 $$($(GO) list ./... | grep -v /web/e2e)
	$(GO) test -count=1 -timeout 30m ./web/e2e/

## conformance-deps: the references internal/conformance compares with
## (node-llama-cpp's prebuilt llama.cpp, Hugging Face's tokenizers and the
## tokenizer.json files of Llama 2, Llama 3 and Qwen3), by npm ci from the
## pinned lock, with no download or build step of their own
CONFORMANCE_NODE = internal/conformance/testdata/node
conformance-deps: $(CONFORMANCE_NODE)/node_modules/.package-lock.json
$(CONFORMANCE_NODE)/node_modules/.package-lock.json: $(CONFORMANCE_NODE)/package-lock.json $(CONFORMANCE_NODE)/package.json
	cd $(CONFORMANCE_NODE) && NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm ci --ignore-scripts --omit=optional --no-audit --no-fund --loglevel=error
	touch $@

## conformance: haeols against llama.cpp and the tokenizers libraries, one
## line per fixture and a summary; non-zero when one is outside tolerance
conformance: conformance-deps
	@mkdir -p bin; rc=0; $(GO) test -count=1 -v -run '^TestConformance' ./internal/conformance/ > bin/conformance.out 2>&1 || rc=$$?; \
	grep -E '^conformance|_test\.go:[0-9]+:|^(ok|FAIL|--- FAIL|--- SKIP)' bin/conformance.out; exit $$rc

## test-nocgo: a CGO_ENABLED=0 build of the CLI has no GPU runner; verify
## must say so and check the CPU kernels
test-nocgo:
	CGO_ENABLED=0 $(GO) build -o bin/haeols-nocgo ./cmd/haeols
	bin/haeols-nocgo verify -methods topk -ratios 0.5 samples/default.safetensors > bin/nocgo.out 2> bin/nocgo.err
	grep -q "built without cgo" bin/nocgo.err && grep -q "GPU: none (CPU kernels only)" bin/nocgo.out && grep -q PASS bin/nocgo.out

test-wasm:
	$(WASM) $(GO) test -count=1 -exec="$(WASMEXEC)" $(WASM_PKGS)

## test-plain: without GOEXPERIMENT=simd (a plain go build or go install)
## the kernels run the portable loops (and on amd64 the SSE2 assembly):
## the same golden bits, natively and in wasm
test-plain:
	GOEXPERIMENT= $(GO) test -count=1 -short ./core/kernel/ ./core/solve/
	GOEXPERIMENT= GOOS=js GOARCH=wasm $(GO) test -count=1 -short -exec="$(WASMEXEC)" ./core/kernel/ ./core/solve/

## bench: kernels (GFLOP/s), one head end to end (ms), the worker's share
## of a drag of the ratio slider (ms per move) and haeols eval of the byte
## model (ms; skipped without ../shared/models), native
bench:
	$(GO) test -run '^$$' -bench . -benchtime 1s ./core/kernel/ ./core/solve/ ./core/
	$(GO) test -run '^$$' -bench . -benchtime 3x ./core/gpu/
	$(GO) test -run '^$$' -bench Drag -benchtime 3x ./wasm/worker/
	$(GO) test -run '^$$' -bench 'EvalKJV|EvaluateOne' -benchtime 1x ./core/eval/

## bench-ratio: the kernel and one-head benchmarks natively and in wasm
## (Node) side by side, run alternately: wasm/native per benchmark (and
## wasm against native AVX2 on a CPU with AVX-512)
bench-ratio:
	scripts/bench-ratio.sh

## bench-numpy: the one-head analysis against the same in NumPy, one core
## (scripts/bench-numpy.sh; needs python3-numpy, and libopenblas0-pthread
## for the OpenBLAS the goal is set against)
bench-numpy:
	scripts/bench-numpy.sh

## bench-wasm: the same benchmarks under Node, for the native/wasm ratio
bench-wasm:
	$(WASM) $(GO) test -run '^$$' -bench . -benchtime 1s -exec="$(WASMEXEC)" ./core/kernel/ ./core/
	$(WASM) $(GO) test -run '^$$' -bench Drag -benchtime 3x -exec="$(WASMEXEC)" ./wasm/worker/

## bench-web: in headless Chromium, when the default sample and a 4,096-token
## 32-head one first show the selected head, its heatmap and the whole grid
## (ms from opening the page), and a drag of the ratio slider to the heatmap
## drawn (ms per move)
bench-web: $(WEB_DIST)/.built
	$(GO) test -count=1 -v -timeout 30m -run 'TestAppOpenTimes$$|TestAppScrubLatency$$' ./web/e2e/ | grep -E 'from opening|scrub .* moves|idle moves:|^(ok|FAIL|---)'

## gpu-kit: the binaries scripts/gpu-check.sh runs on a GPU machine, in
## bin/gpukit (about 50 MB: wgpu-native is linked in)
gpu-kit:
	$(GO) build -trimpath -ldflags='-s -w' -o bin/gpukit/haeols ./cmd/haeols
	$(GO) test -c -trimpath -ldflags='-s -w' -o bin/gpukit/gpu.test ./core/gpu/

## samples: regenerate the shipped samples byte for byte (the real-model
## capture needs the llama2.c checkpoint, see samples/README.md)
MODELS ?= ../shared/models
samples:
	$(GO) run ./cmd/haeols gen -preset default -o samples/default.safetensors
	$(GO) run ./cmd/haeols gen -preset needle -o samples/needle.safetensors
	@if [ -f $(MODELS)/stories260K.bin ]; then \
		$(GO) run ./cmd/haeols capture -tokens 512 -o samples/stories260K.safetensors $(MODELS)/stories260K.bin; \
	else echo "skipping samples/stories260K.safetensors: $(MODELS)/stories260K.bin not found"; fi

## fuzz: a short run of every fuzz target (one per parser)
FUZZ = ./core/sample:FuzzDecodeSafetensors ./core/sample:FuzzDecodeNPZ ./core/sample:FuzzDecodeNPY \
	./core/llama:FuzzDecode ./core/llama:FuzzDecodeTokenizer ./ui/state:FuzzParseQuery ./ui/heatmap:FuzzDecode ./ui/heatmap:FuzzDecodeFactored \
	./core/safetensors:FuzzDecode ./core/model/gguf:FuzzDecode ./core/model/hf:FuzzParseConfig ./core/model/hf:FuzzDecodeIndex \
	./core/model/tokenizer:FuzzEncodeDecode ./core/model/tokenizer:FuzzFromHF ./core/model/tokenizer:FuzzFromSentencePiece ./core/model:FuzzFromGGUF \
	./internal/wasmcode:FuzzFuncs
fuzz:
	for t in $(FUZZ); do \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime 20s -parallel 1 $${t%%:*} || exit 1; done

## fuzz-short: every fuzz target for 1 s, part of make test (CI): a
## parser change that panics on a mutation of its seeds fails there
fuzz-short:
	@mkdir -p bin; for t in $(FUZZ); do \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime 1s -parallel 1 $${t%%:*} > bin/fuzz.out 2>&1 || { cat bin/fuzz.out; exit 1; }; done
	@echo "fuzz-short: $(words $(FUZZ)) fuzz targets ran 1 s each"

## fuzz-long: every fuzz target for FUZZTIME each (default 5m; not run in
## CI). A crasher is left in the package's testdata/fuzz/TARGET/: commit it,
## it is then a regression case that every `go test` runs.
FUZZTIME ?= 5m
fuzz-long:
	for t in $(FUZZ); do \
		$(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) $${t%%:*} || exit 1; done

## run: the CLI on the built-in default sample
run:
	$(GO) run ./cmd/haeols run

clean:
	rm -rf bin

## web: build the static site in web/dist (relative paths, any static host)
# The wasm programs under wasm/ are built (app.wasm is the page and, in a
# Web Worker, the core: wasm/worker is its library, without its model runner
# (-tags nomodel); runner.wasm is the core with the model runner, loaded when
# a model is opened), vugugen runs where .vugu files are
# newer than their generated code, the llama2.c checkpoints of $(MODELS)
# (with NAME.tokenizer.bin where there is one) are bundled under models/
# when that folder exists, the constructed induction model is written there
# as a GGUF file (haeols gen-model -dtype F16 induction), all listed in
# models.js (window.haeolsModels), and every .wasm/.js/.html/.css/
# .safetensors/.gguf gets reproducible precompressed copies: .gz (gzip -9 -n) and,
# when the brotli tool is installed, .br (brotli -q 11, cached by content
# hash in ~/.cache/haeols-web since it is slow). The site is built in
# web/dist.tmp under a lock and then swapped in.
WEB_DIST  = web/dist
WEB_WASM  = $(filter-out wasm/worker/,$(wildcard wasm/*/))
WEB_SRC   = $(shell find core ui wasm wire assets web internal/bytemodel cmd/haeols/genmodel.go -type f -not -path 'web/dist*' -not -path 'web/e2e/*' 2>/dev/null) $(wildcard samples/*.safetensors) $(wildcard $(MODELS)/*.bin) go.mod go.sum
# What the app's first view loads: the default sample is the "default"
# generator preset, made in the worker, so no sample file is in the list
# (web/e2e TestAppFirstLoad adds up what the browser fetches: ≤ 5 MB gzip).
WEB_FIRST = index.html app.css app.wasm wasm_exec.js models.js worker.js heatmap.html heatmap.wasm
WASMFLAGS = -trimpath -ldflags='-s -w'

web: $(WEB_DIST)/.built

$(WEB_DIST)/.built: $(WEB_SRC)
	@set -e; exec 9>"$${TMPDIR:-/tmp}/haeols-web-build.lock"; flock 9; \
	for d in $$(find ui wasm -name '*.vugu' -printf '%h\n' 2>/dev/null | sort -u); do \
		gen=$$(ls $$d/*_gen.go 2>/dev/null | head -1); \
		if [ -z "$$gen" ] || [ -n "$$(find $$d -maxdepth 1 -name '*.vugu' -newer $$gen)" ]; then \
			echo "vugugen $$d"; $(GO) tool vugugen -skip-go-mod -skip-main $$d && $(GOFMT) -w $$d/*_gen.go; fi; done; \
	tmp=$(WEB_DIST).tmp; rm -rf $$tmp; mkdir -p $$tmp/samples; \
	cp $$($(GO) env GOROOT)/lib/wasm/wasm_exec.js $$tmp/; \
	cp $$(find web -maxdepth 1 -type f \( -name '*.html' -o -name '*.js' -o -name '*.css' -o -name '*.png' -o -name '*.svg' \)) $$tmp/; \
	for d in $(WEB_WASM); do n=$$(basename $$d); tags=; [ $$n = app ] && tags="-tags nomodel"; \
		echo "$(WASM) go build $$tags -o $(WEB_DIST)/$$n.wasm ./$$d"; \
		$(WASM) $(GO) build $(WASMFLAGS) $$tags -o $$tmp/$$n.wasm ./$$d; done; \
	if ls samples/*.safetensors >/dev/null 2>&1; then cp samples/*.safetensors $$tmp/samples/; fi; \
	list=""; for m in $$(ls $(MODELS)/*.bin 2>/dev/null | grep -v '\.tokenizer\.bin$$'); do \
		n=$$(basename $$m .bin); mkdir -p $$tmp/models; cp $$m $$tmp/models/; e="{\"file\":\"models/$$n.bin\""; \
		if [ -f $(MODELS)/$$n.tokenizer.bin ]; then cp $(MODELS)/$$n.tokenizer.bin $$tmp/models/; e="$$e,\"tokenizer\":\"models/$$n.tokenizer.bin\""; fi; \
		list="$$list$${list:+,}$$e}"; done; \
	mkdir -p $$tmp/models; echo "haeols gen-model -dtype F16 -o $(WEB_DIST)/models/induction.gguf induction"; \
	$(GO) run ./cmd/haeols gen-model -dtype F16 -o $$tmp/models/induction.gguf induction > /dev/null; \
	list="$$list$${list:+,}{\"file\":\"models/induction.gguf\"}"; \
	echo "window.haeolsModels = [$$list];" > $$tmp/models.js; \
	find $$tmp -type f \( -name '*.wasm' -o -name '*.js' -o -name '*.html' -o -name '*.css' -o -name '*.safetensors' -o -name '*.gguf' \) \
		-exec gzip -9 -k -n -f {} \; ; \
	if command -v brotli >/dev/null 2>&1; then \
		cache=$${XDG_CACHE_HOME:-$$HOME/.cache}/haeols-web; mkdir -p $$cache; \
		find $$tmp -type f \( -name '*.wasm' -o -name '*.js' -o -name '*.html' -o -name '*.css' -o -name '*.safetensors' -o -name '*.gguf' \) | \
		{ while read f; do h=$$(sha256sum $$f | cut -c1-64); \
			{ if [ ! -s $$cache/$$h.br ]; then t=$$(mktemp $$cache/tmp.XXXXXX); brotli -q 11 -c $$f > $$t && mv $$t $$cache/$$h.br; fi; \
			cp $$cache/$$h.br $$f.br; chmod 644 $$f.br; } & done; wait; }; \
	else echo "brotli not found: gzip copies only (apt-get install brotli)"; fi; \
	rm -rf $(WEB_DIST); mv $$tmp $(WEB_DIST); \
	gz=0; br=0; echo "initial load, precompressed (bytes: gzip -9, brotli -q 11, uncompressed):"; \
	for f in $(WEB_FIRST); do if [ -f $(WEB_DIST)/$$f ]; then \
		g=$$(stat -c %s $(WEB_DIST)/$$f.gz); b=$$g; [ -f $(WEB_DIST)/$$f.br ] && b=$$(stat -c %s $(WEB_DIST)/$$f.br); \
		gz=$$((gz + g)); br=$$((br + b)); \
		printf '  %-28s %9d %9d %9d\n' $$f $$g $$b $$(stat -c %s $(WEB_DIST)/$$f); fi; done; \
	awk -v g=$$gz -v b=$$br 'BEGIN { printf "  %-28s %9d %9d   (%.2f MB gzip, %.2f MB brotli)\n", "total", g, b, g / 1e6, b / 1e6 }'; \
	printf '  %-28s %9d %9d %9d  (when a model is opened)\n' runner.wasm $$(stat -c %s $(WEB_DIST)/runner.wasm.gz) \
		$$(stat -c %s $(WEB_DIST)/runner.wasm.br 2>/dev/null || stat -c %s $(WEB_DIST)/runner.wasm.gz) $$(stat -c %s $(WEB_DIST)/runner.wasm); \
	for f in $$(cd $(WEB_DIST) && ls samples/*.safetensors 2>/dev/null); do \
		printf '  %-28s %9d %9d %9d  (only when picked)\n' $$f $$(stat -c %s $(WEB_DIST)/$$f.gz) \
			$$(stat -c %s $(WEB_DIST)/$$f.br 2>/dev/null || stat -c %s $(WEB_DIST)/$$f.gz) $$(stat -c %s $(WEB_DIST)/$$f); done; \
	touch $@

## serve: build the site if needed and serve it on 127.0.0.1 (prints the URL)
serve: $(WEB_DIST)/.built
	$(GO) run ./cmd/haeols serve

## test-e2e: real-browser tests (headless Chromium via chromedp) of web/dist
test-e2e: $(WEB_DIST)/.built
	$(GO) test -count=1 -v ./web/e2e/

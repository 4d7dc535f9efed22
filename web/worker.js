// haeols core in a Web Worker: loads wasm_exec.js and app.wasm (Go; the
// same program as the page, which runs the core when it finds no document),
// or, started as worker.js#runner, runner.wasm (the core with the model
// runner, which the page starts when it first opens a model), and
// bridges messages {json: "...", buffers: {name: ArrayBuffer}} (package wire).
// Messages that arrive before the Go side is ready are queued. Started as
// worker.js#module, it waits for the app.wasm module the page compiled, sent
// as {module: WebAssembly.Module, cores: N}; otherwise it fetches and
// compiles app.wasm itself. Started as worker.js#helper by a worker, it is
// that worker's helper (a grid's share of the KV heads) and waits for the
// module the same way. Started with the page's query (worker.js?QUERY), it
// fetches the sample file of the site that the query names at once (see
// haeolsFetch), and the Go side starts looking for the GPU it asks for.
"use strict";
// A helper tells the worker that started it that it runs: that worker
// holds off its long decoding until then (wasm/worker's Pool.share).
if (self.location.hash === "#helper") {
	self.postMessage({started: true});
}
importScripts("wasm_exec.js");

// The largest file the worker opens (wasm/worker's MaxFileBytes): a
// prefetch does not read a body that declares more.
const prefetchMaxBytes = 1 << 30;

// prefetched is the file the page's link names, fetched while the page and
// this worker start: {url (absolute), abort, answer: a promise of an object
// like a fetch Response (ok, status, statusText, headers, arrayBuffer)}.
let prefetched = null;
// prefetchSize is a promise of the prefetched file's declared length (0
// when unknown, or once the prefetch is dropped); null without a prefetch.
let prefetchSize = null;
let prefetchDropped = false;

function prefetch(url) {
	const abort = new AbortController();
	const resp = fetch(url, {signal: abort.signal});
	prefetchSize = resp.then((r) => (r.ok && !prefetchDropped ? Number(r.headers.get("content-length")) || 0 : 0), () => 0);
	const answer = resp.then(async (resp) => {
		const n = Number(resp.headers.get("content-length"));
		if (!resp.ok || !(n >= 0 && n <= prefetchMaxBytes)) {
			return resp; // unread: the Go side says why it refuses it
		}
		// Read now: an unread body stops downloading once Chromium's
		// buffer is full.
		const buf = await resp.arrayBuffer();
		return {ok: true, status: resp.status, statusText: resp.statusText, headers: resp.headers, arrayBuffer: () => Promise.resolve(buf)};
	});
	answer.catch(() => {}); // a failed prefetch is fetched again
	prefetched = {url: new URL(url, self.location.href).href, abort, answer};
}

// Only a sample file of the site (ui/state's SampleKind "url"); the Go
// side drops the prefetch when it loads something else.
const linked = new URLSearchParams(self.location.search).get("sample");
if (linked !== null && /^samples\/[A-Za-z0-9][\w.-]*\.(safetensors|npz|npy)$/.test(linked)) {
	prefetch(linked);
}

// haeolsFetch is fetch(url) for the Go side (wasm/worker's fetch): the
// prefetched file when it is that URL's (else fetched again), and a fresh
// fetch otherwise. The prefetch is handed out once, or dropped by the first
// fetch or load of anything else (haeolsDropPrefetch).
self.haeolsFetch = (url) => {
	const p = prefetched;
	prefetched = null;
	if (p !== null && p.url === new URL(url, self.location.href).href) {
		return p.answer.catch(() => fetch(url));
	}
	if (p !== null) {
		prefetchDropped = true;
		p.abort.abort();
	}
	return fetch(url);
};
// haeolsPrefetchSize returns prefetchSize: the Go side starts the helper
// workers a file that large is shared with while it downloads.
self.haeolsPrefetchSize = () => prefetchSize;
self.haeolsDropPrefetch = () => {
	if (prefetched !== null) {
		prefetchDropped = true;
		prefetched.abort.abort();
		prefetched = null;
	}
};

const pending = [];
// worker.js#helper is a helper worker (wasm/worker's Pool), started by a
// worker with the module it runs; a helper starts no helpers.
self.haeolsHelper = self.location.hash === "#helper";
// Whether the Go program was started (or is waiting for its module).
let started = !(self.location.hash === "#module" || self.haeolsHelper);
self.onmessage = (e) => {
	const d = e.data;
	if (!started) {
		started = true;
		if (d && typeof d.cores === "number") {
			self.haeolsCores = d.cores; // the page's count
		}
		start(d && d.module).catch(fail);
	} else if (self.haeolsReceive) {
		self.haeolsReceive(d);
	} else {
		pending.push(d);
	}
};
self.haeolsReady = () => {
	while (pending.length > 0) {
		self.haeolsReceive(pending.shift());
	}
};

function fail(err) {
	self.postMessage({json: JSON.stringify({id: 0, op: "", error: "worker: could not start the core: " + err, done: true}), buffers: {}});
}

async function start(mod) {
	const go = new Go();
	let inst;
	if (mod instanceof WebAssembly.Module) {
		inst = await WebAssembly.instantiate(mod, go.importObject);
	} else {
		const file = self.location.hash === "#runner" ? "runner.wasm" : "app.wasm";
		let made;
		try {
			made = await WebAssembly.instantiateStreaming(fetch(file), go.importObject);
		} catch (streamErr) {
			// Some static hosts serve .wasm with the wrong MIME type.
			const resp = await fetch(file);
			if (!resp.ok) {
				throw new Error(file + ": HTTP " + resp.status);
			}
			made = await WebAssembly.instantiate(await resp.arrayBuffer(), go.importObject);
		}
		mod = made.module;
		inst = made.instance;
	}
	// The module, for the helper workers this worker starts.
	self.haeolsModule = mod;
	go.run(inst).then(() => fail("the Go program exited"));
}

if (started) {
	start(null).catch(fail);
}

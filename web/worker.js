// haeols core in a Web Worker: loads wasm_exec.js and app.wasm (Go; the
// same program as the page, which runs the core when it finds no document) and
// bridges messages {json: "...", buffers: {name: ArrayBuffer}} (package wire).
// Messages that arrive before the Go side is ready are queued. Started as
// worker.js#module, it waits for the app.wasm module the page compiled, sent
// as its first message {module: WebAssembly.Module}; otherwise it fetches
// and compiles app.wasm itself. Started as worker.js#helper by a worker, it
// is that worker's helper (a grid's share of the KV heads) and waits for
// the module the same way.
"use strict";
importScripts("wasm_exec.js");

const pending = [];
self.onmessage = (e) => {
	if (self.haeolsReceive) {
		self.haeolsReceive(e.data);
	} else {
		pending.push(e.data);
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
		let made;
		try {
			made = await WebAssembly.instantiateStreaming(fetch("app.wasm"), go.importObject);
		} catch (streamErr) {
			// Some static hosts serve .wasm with the wrong MIME type.
			const resp = await fetch("app.wasm");
			if (!resp.ok) {
				throw new Error("app.wasm: HTTP " + resp.status);
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

// worker.js#helper is a helper worker (wasm/worker's Pool), started by a
// worker with the module it runs; a helper starts no helpers.
self.haeolsHelper = self.location.hash === "#helper";
if (self.location.hash === "#module" || self.haeolsHelper) {
	const queue = self.onmessage;
	self.onmessage = (e) => {
		self.onmessage = queue;
		if (e.data && typeof e.data.cores === "number") {
			self.haeolsCores = e.data.cores; // the page's count
		}
		start(e.data && e.data.module).catch(fail);
	};
} else {
	start(null).catch(fail);
}

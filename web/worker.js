// haeols core in a Web Worker: loads wasm_exec.js and app.wasm (Go; the
// same program as the page, which runs the core when it finds no document) and
// bridges messages {json: "...", buffers: {name: ArrayBuffer}} (package wire).
// Messages that arrive before the Go side is ready are queued. Started as
// worker.js#module, it waits for the app.wasm module the page compiled, sent
// as its first message {module: WebAssembly.Module}; otherwise it fetches
// and compiles app.wasm itself.
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
		try {
			inst = (await WebAssembly.instantiateStreaming(fetch("app.wasm"), go.importObject)).instance;
		} catch (streamErr) {
			// Some static hosts serve .wasm with the wrong MIME type.
			const resp = await fetch("app.wasm");
			if (!resp.ok) {
				throw new Error("app.wasm: HTTP " + resp.status);
			}
			inst = (await WebAssembly.instantiate(await resp.arrayBuffer(), go.importObject)).instance;
		}
	}
	go.run(inst).then(() => fail("the Go program exited"));
}

if (self.location.hash === "#module") {
	const queue = self.onmessage;
	self.onmessage = (e) => {
		self.onmessage = queue;
		start(e.data && e.data.module).catch(fail);
	};
} else {
	start(null).catch(fail);
}

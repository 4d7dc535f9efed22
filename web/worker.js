// haeols core in a Web Worker: loads wasm_exec.js and app.wasm (Go; the
// same program as the page, which runs the core when it finds no document) and
// bridges messages {json: "...", buffers: {name: ArrayBuffer}} (package wire).
// Messages that arrive before the Go side is ready are queued.
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

(async () => {
	const go = new Go();
	let result;
	try {
		result = await WebAssembly.instantiateStreaming(fetch("app.wasm"), go.importObject);
	} catch (streamErr) {
		// Some static hosts serve .wasm with the wrong MIME type.
		const resp = await fetch("app.wasm");
		if (!resp.ok) {
			throw new Error("app.wasm: HTTP " + resp.status);
		}
		result = await WebAssembly.instantiate(await resp.arrayBuffer(), go.importObject);
	}
	go.run(result.instance).then(() => fail("the Go program exited"));
})().catch(fail);

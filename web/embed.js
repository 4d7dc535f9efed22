// haeols embed: one attention head's heatmaps with a ratio slider and the
// reconstruction error of the chosen method next to top-k's at the same
// ratio. For an <iframe> in a blog post (see EMBED.md); everything runs here
// from the site's own files: the core in a Web Worker (worker.js, protocol
// package wire), the heatmap renderer in an iframe (heatmap.html).
//
// Query parameters (the simulator's URL names): sample (a preset name,
// samples/FILE, or a bundled model models/NAME.bin, whose prompt, task and
// depth the embed runs and shows what it says; default "default"), layer (0), head (0), method ("hae-ols"),
// ratio, lambda, phi, tau, panel ("all", or "orig", "comp", "diff"). The
// method parameters' defaults (the core's) and ranges (their sliders',
// wire.Sliders) come with the worker's answer to the load (info.defaults,
// info.sliders).
"use strict";

(() => {
	const q = new URLSearchParams(location.search);
	const problems = [];
	function num(name, def, lo, hi) {
		if (!q.has(name)) {
			return def;
		}
		const v = Number(q.get(name));
		if (q.get(name) === "" || !Number.isFinite(v) || v < lo || v > hi) {
			problems.push(`${name}=${q.get(name)} is not a number in [${lo}, ${hi}]; using ${def}`);
			return def;
		}
		return v;
	}
	function index(name) {
		const v = num(name, 0, 0, 4096);
		if (!Number.isInteger(v)) {
			problems.push(`${name}=${q.get(name)} is not a whole number; using 0`);
			return 0;
		}
		return v;
	}
	const nameRE = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
	const fileRE = /^samples\/[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\.(safetensors|npz|npy)$/;
	const modelRE = /^models\/[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\.(bin|gguf)$/;
	let sample = q.get("sample") || "default";
	let source;
	// A bundled model (models.js lists them: llama2.c checkpoints, and GGUF
	// files, which carry their tokenizer): the embed shows what
	// it says on the prompt (prompt, task, depth), with the full cache and
	// with the method at the ratio, side by side.
	const says = modelRE.test(sample);
	if (says) {
		const task = ["passkey", "copy"].includes(q.get("task")) ? q.get("task") : "";
		source = {kind: sample.endsWith(".gguf") ? "checkpoint" : "llama", url: sample, prompt: {task, text: task ? "" : (q.get("prompt") || "").slice(0, 4096), depth: task === "passkey" ? num("depth", 0.5, 0, 1) : 0}};
	} else if (fileRE.test(sample)) {
		source = {kind: "url", url: sample};
	} else if (nameRE.test(sample)) {
		source = {kind: "preset", preset: sample};
	} else {
		problems.push(`sample=${sample} is neither a preset name nor samples/FILE; using default`);
		sample = "default";
		source = {kind: "preset", preset: "default"};
	}
	let method = q.get("method") || "hae-ols";
	if (!nameRE.test(method)) {
		problems.push(`method=${method} is not a method name; using hae-ols`);
		method = "hae-ols";
	}
	const baseline = "topk";
	let panel = q.get("panel") || "all";
	if (!["all", "orig", "comp", "diff"].includes(panel)) {
		problems.push(`panel=${panel}: want all, orig, comp or diff; using all`);
		panel = "all";
	}
	const layer = index("layer");
	const head = index("head");
	// The method parameters, known once the sample is loaded (setParams).
	let params = null;

	const $ = (id) => document.getElementById(id);
	const slider = $("ratio"), ratioOut = $("ratio-out"), readout = $("readout"), status = $("status");
	const frame = $("heatmap");

	// State, also read by the browser tests.
	const st = {
		ready: false, info: null, method, baseline, layer, head, params,
		want: null,                // the slider's ratio
		shown: null,               // {ratio, err, na} of the method, drawn
		base: null,                // {ratio, err, na} of the baseline
		drawn: 0, drawnRatio: null, heatmapReady: false,
		hover: null,               // the renderer's last heatmap-hover
		view: null,                // and heatmap-view
		lastUpdateMs: null,        // slider move -> method's answer, ms
		errors: problems.slice(),
	};
	window.haeolsEmbed = st;

	const fmtRatio = (r) => r.toFixed(2);
	const fmtErr = (x) => (x === null || x === undefined || !Number.isFinite(x)) ? "n/a" : x.toFixed(4);
	function showStatus() {
		status.textContent = st.errors.join(" · ");
	}
	showStatus();

	// What the model says: the free runs side by side, the divergence
	// marked, and the method's end-to-end numbers (HAE-OLS.md section 8).
	function showSays() {
		const r = st.says && st.says.ratio === st.want ? st.says : null;
		const i = st.info && st.info.eval;
		if (!i) {
			readout.textContent = "loading…";
			return;
		}
		const esc = (t) => t.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
		const run = (texts, div) => texts.map((t, k) => k < div ? esc(t) : `<mark${k === div ? ' class="first"' : ""}>${esc(t)}</mark>`).join(i.tokenizer ? "" : " ");
		const div = r && !r.na ? r.diverge : i.free.length;
		$("says-full").innerHTML = run(i.free_text, div);
		$("says-method").innerHTML = r ? (r.na ? "n/a: " + esc(r.na) : run(r.free_text, div)) : "…";
		$("says-head").textContent = `${method} at ${fmtRatio(st.want)}`;
		const f = (x) => x === null || x === undefined ? "–" : Number(x).toPrecision(4);
		readout.innerHTML = !r ? `<b>${method}</b> …` : r.na ? `<b>${method}</b> does not fit` :
			`<b>${method}</b> kl ${f(r.kl)} · agree ${f(r.agree)} · ppl_ratio ${f(r.ppl_ratio)}` + (r.needle_acc === null ? "" : ` · needle_acc ${f(r.needle_acc)}`);
		readout.title = "end to end: KL of the next-token distributions from the full cache's (nats), share of equal most likely tokens, perplexity over the full cache's, answers found";
	}

	function showReadout() {
		if (says) {
			showSays();
			return;
		}
		const parts = [];
		const cur = st.shown && st.shown.ratio === st.want ? st.shown : null;
		const base = st.base && st.base.ratio === st.want ? st.base : null;
		if (!st.info) {
			readout.textContent = "loading…";
			return;
		}
		parts.push(`<b>${method}</b> err ${cur ? (cur.na ? "does not fit" : fmtErr(cur.err)) : "…"}`);
		parts.push(`${baseline} ${base ? (base.na ? "does not fit" : fmtErr(base.err)) : "…"}`);
		readout.innerHTML = parts.join(" &nbsp;·&nbsp; ");
		readout.title = "relative reconstruction error of the attention outputs on held-out probe queries (lower is better)";
	}

	function describe() {
		const i = st.info;
		$("what").textContent = i && says ? `${i.name} · ${i.tokens} tokens, the first ${i.prefix} compressed (every layer and KV head) · free runs after them` :
			i ? `${i.name} · layer ${layer} of ${i.layers} · head ${head} of ${i.heads} · ${i.prefix} cached tokens` : sample;
		const link = new URLSearchParams({sample, layer, head, method, panel});
		for (const k of ["ratio", "lambda", "phi", "tau"]) {
			if (params) {
				link.set(k, String(k === "ratio" ? st.want : params[k]));
			} else if (q.has(k)) {
				link.set(k, q.get(k));
			}
		}
		if (says) {
			for (const k of ["prompt", "task", "depth"]) {
				if (q.has(k)) link.set(k, q.get(k));
			}
		}
		$("open").href = "index.html?" + link.toString();
	}
	describe();

	// The worker: one request in flight at a time (a newer request of the
	// same op replaces a queued one there, so we never queue two).
	// A model runs in runner.wasm (worker.js#runner), a sample in app.wasm.
	const worker = new Worker(source.kind === "checkpoint" || source.kind === "llama" ? "worker.js#runner" : "worker.js");
	let nextID = 0, inflight = null;
	const send = (req, kind) => {
		req.id = ++nextID;
		inflight = {id: req.id, kind, ratio: req.params ? req.params.ratio : null, t0: performance.now()};
		worker.postMessage({json: JSON.stringify(req), buffers: {}});
	};
	const start = () => send({op: "load", source}, "load");

	// setParams reads the method parameters from the URL, each within its
	// slider (info.sliders), else the core's default (info.defaults), and
	// sets the ratio slider's range.
	function setParams(info) {
		const n = problems.length;
		params = {};
		for (const s of info.sliders) {
			params[s.name] = num(s.name, info.defaults[s.name], s.min, s.max);
			if (s.name === "ratio") {
				Object.assign(slider, {min: s.min, max: s.max, step: s.step});
			}
		}
		st.params = params;
		st.errors.push(...problems.slice(n));
		showStatus();
		slider.value = String(params.ratio);
		slider.disabled = false;
	}
	if (says) {
		// models.js (written by make web) says which bundled model has a
		// tokenizer; only a model's embed asks for it.
		const sc = document.createElement("script");
		sc.src = "models.js";
		sc.onload = sc.onerror = () => {
			const m = (window.haeolsModels || []).find((x) => x.file === sample);
			if (m && m.tokenizer) {
				source.tokenizer_url = m.tokenizer;
			}
			start();
		};
		document.head.appendChild(sc);
	} else {
		start();
	}

	function pump() {
		if (inflight || !st.info) {
			return;
		}
		const p = {ratio: st.want, lambda: params.lambda, phi: params.phi, tau: params.tau};
		if (says) {
			if (!st.says || st.says.ratio !== st.want) {
				send({op: "eval", methods: [method], params: p}, "says");
			}
			return;
		}
		if (!st.shown || st.shown.ratio !== st.want) {
			send({op: "head", method, params: p, layer, head, maps: true, panel}, "method");
		} else if (!st.base || st.base.ratio !== st.want) {
			send({op: "head", method: baseline, params: p, layer, head}, "base");
		}
	}

	worker.onmessage = (e) => {
		const r = JSON.parse(e.data.json);
		const bufs = e.data.buffers || {};
		if (!inflight || r.id !== inflight.id) {
			if (r.error) { // e.g. the worker could not start
				st.errors.push(r.error);
				showStatus();
			}
			return;
		}
		if (!r.done && !r.error) {
			return; // progress
		}
		const req = inflight;
		inflight = null;
		if (r.error) {
			st.errors.push(r.error);
			showStatus();
			if (req.kind === "load") {
				readout.textContent = "could not load the sample";
				return;
			}
			// Keep going with the next change; do not retry the same ratio.
			if (req.kind === "says") {
				st.says = {ratio: req.ratio, na: r.error, diverge: 0, free_text: []};
			} else if (req.kind === "method") {
				st.shown = {ratio: req.ratio, err: null, na: false};
			} else {
				st.base = {ratio: req.ratio, err: null, na: false};
			}
		} else if (req.kind === "load") {
			st.info = r.info;
			setParams(r.info);
			if (layer >= r.info.layers || head >= r.info.heads) {
				st.errors.push(`layer ${layer}, head ${head}: the sample has ${r.info.layers} layers of ${r.info.heads} heads`);
				showStatus();
				st.info = null;
				readout.textContent = "no such head";
				return;
			}
			if (says) {
				frame.hidden = true;
				$("says").hidden = false;
			}
			onSlide();
			return;
		} else if (req.kind === "says") {
			st.says = Object.assign({ratio: req.ratio}, r.eval);
			st.lastUpdateMs = performance.now() - req.t0;
		} else {
			const h = r.head;
			const res = {ratio: req.ratio, err: h.na ? null : h.metrics.err, na: !!h.na};
			if (req.kind === "method") {
				st.shown = res;
				st.lastUpdateMs = performance.now() - req.t0;
				if (!h.na && h.maps && bufs.orig) {
					postMaps(h, bufs);
				}
			} else {
				st.base = res;
			}
		}
		showReadout();
		pump();
	};
	worker.onerror = (e) => {
		st.errors.push("worker: " + (e.message || "failed to start"));
		showStatus();
	};

	// The heatmap iframe: send the latest maps once it is ready.
	let pendingMaps = null;
	function postMaps(h, bufs) {
		// The worker made the heatmap page's message (h.maps); forward it.
		pendingMaps = {json: JSON.stringify(h.maps), buffers: Object.assign({}, bufs)};
		flushMaps();
	}
	function flushMaps() {
		if (!pendingMaps || !st.heatmapReady) {
			return;
		}
		const m = pendingMaps;
		pendingMaps = null;
		const transfer = Object.values(m.buffers).filter((b) => b instanceof ArrayBuffer);
		frame.contentWindow.postMessage(m, location.origin === "null" ? "*" : location.origin, transfer);
	}
	// heatmap.html keeps the latest message until its program runs, so its
	// load event is as good as the program's "ready".
	frame.addEventListener("load", () => {
		st.heatmapReady = true;
		flushMaps();
	});
	window.addEventListener("message", (e) => {
		if (e.source !== frame.contentWindow || !e.data || typeof e.data.type !== "string") {
			return;
		}
		switch (e.data.type) {
		case "heatmap-ready":
			st.heatmapReady = true;
			flushMaps();
			break;
		case "heatmap-drawn":
			st.drawn++;
			st.drawnRatio = e.data.ratio;
			break;
		case "heatmap-hover":
			st.hover = {panel: e.data.panel || "", row: e.data.row, col: e.data.col, value: e.data.value};
			break;
		case "heatmap-view":
			st.view = {r0: e.data.r0, rspan: e.data.rspan, c0: e.data.c0, cspan: e.data.cspan, rows: e.data.rows, cols: e.data.cols};
			break;
		case "heatmap-error":
			st.errors.push("heatmap: " + e.data.error);
			showStatus();
			break;
		}
	});

	function onSlide() {
		const v = Number(slider.value);
		st.want = v;
		ratioOut.textContent = fmtRatio(v);
		slider.setAttribute("aria-valuetext", `${Math.round(v * 100)} percent of the full cache's memory`);
		showReadout();
		describe();
		pump();
	}
	slider.addEventListener("input", onSlide);
})();

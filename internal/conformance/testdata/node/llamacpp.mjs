// The llama.cpp reference: reads a JSON request on standard input,
//   {"model": "x.gguf", "prompts": [[1, 5, 9], ...], "greedy": 16, "tokenize": ["text", ...]}
// loads the GGUF file with llama.cpp (node-llama-cpp's prebuilt CPU build,
// never built or downloaded here), and writes on standard output
//   {"prompts": [{"probs": [[p0, p1, ...] per position], "greedy": [ids]}],
//    "tokens": [[ids] per text]}
// probs[i] is llama.cpp's next-token distribution after prompt[0..i]: the
// softmax of its logits at temperature 1 with no top-k, top-p or min-p cut,
// with a float32 KV cache.
// greedy is llama.cpp's argmax continuation of the whole prompt.
import { getLlama, LlamaLogLevel } from "node-llama-cpp";

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const req = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const llama = await getLlama({ gpu: false, build: "never", usePrebuiltBinaries: true, progressLogs: false, logLevel: LlamaLogLevel.error });
const model = await llama.loadModel({ modelPath: req.model, gpuLayers: 0, vocabOnly: !!req.vocabOnly });
const out = { prompts: [], tokens: [] };
for (const text of req.tokenize ?? []) {
	out.tokens.push(Array.from(model.tokenize(text, !!req.specialTokens)));
}
if (!req.vocabOnly) {
	const vocab = model.tokens.count ?? req.vocab;
	const full = { temperature: 1, topK: 0, topP: 1, minP: 0, seed: 1 };
	// The KV cache in float32 and attention without the flash kernel (which
	// rounds queries to F16): llama.cpp's defaults store K and V as F16.
	const ctxOptions = {
		contextSize: 256, batchSize: 256, sequences: 1, threads: req.threads ?? 2, flashAttention: false,
		experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32",
	};
	for (const prompt of req.prompts ?? []) {
		const context = await model.createContext(ctxOptions);
		const seq = context.getSequence();
		const items = prompt.map((t) => [t, { generateNext: { probabilities: true, options: full } }]);
		const res = await seq.controlledEvaluate(items);
		const probs = res.map((r) => {
			const p = new Array(vocab).fill(0);
			for (const [tok, v] of r.next.probabilities) p[tok] = v;
			return p;
		});
		await context.dispose();
		// The greedy continuation, from a fresh context.
		const gctx = await model.createContext(ctxOptions);
		const gseq = gctx.getSequence();
		const greedy = [];
		if (req.greedy > 0) {
			for await (const tok of gseq.evaluate(prompt, { temperature: 0 })) {
				greedy.push(tok);
				if (greedy.length >= req.greedy) break;
			}
		}
		await gctx.dispose();
		out.prompts.push({ probs, greedy });
	}
}
await model.dispose();
await llama.dispose();
process.stdout.write(JSON.stringify(out));

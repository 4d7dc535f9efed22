// The Hugging Face tokenizers reference: reads a JSON request on standard
// input, {"tokenizer": "tokenizer.json", "config": "tokenizer_config.json",
// "texts": ["...", ...]}, and writes {"ids": [[...] per text]}: each text
// encoded by @huggingface/tokenizers with its special tokens (BOS and the
// like, as the files' post-processor adds them).
import { readFileSync } from "node:fs";
import { Tokenizer } from "@huggingface/tokenizers";

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const req = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const json = JSON.parse(readFileSync(req.tokenizer, "utf8"));
const config = req.config ? JSON.parse(readFileSync(req.config, "utf8")) : {};
const tok = new Tokenizer(json, config);
const ids = req.texts.map((t) => Array.from(tok.encode(t).ids, Number));
process.stdout.write(JSON.stringify({ ids }));

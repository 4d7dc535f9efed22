#!/usr/bin/env python3
"""Export the post-RoPE q/k/v of a Hugging Face causal LM as a haeols sample.

STATUS: the Hugging Face path (--model) has NOT been run. It was written on a
machine without torch, transformers or numpy and without access to PyPI, so
it is untested against a real model: expect to fix details on first use.
Only the pure-Python safetensors writer has been run, through --selftest.

What it does (HAE-OLS.md section 6): tokenizes --prompt, optionally extends it
by --generate greedy tokens, runs ONE forward pass over the whole sequence
with hooks, and writes a safetensors file with

  q [L, H, N, d]    post-RoPE queries of every layer and query head
  k [L, Hkv, N, d]  post-RoPE keys of every layer and KV head
  v [L, Hkv, N, d]  values
  __metadata__      haeols.format "1", model, source, prefix, scale,
                    tokens (JSON), token_ids (JSON), description

in F32 (default) or F16. It works for LLaMA/Mistral/Qwen2/Qwen3-style
attention modules (model.model.layers[i].self_attn with v_proj, whose
modeling module defines apply_rotary_pos_emb): the rotary function of that
module is wrapped to record its outputs, which are exactly the q and k the
attention uses; v is the output of v_proj. Qwen3's q/k norms come before
RoPE, so they are included.

Usage:
  python3 scripts/export_hf.py --model TinyLlama/TinyLlama-1.1B-Chat-v1.0 \\
      --prompt "Once upon a time" --generate 200 --out tinyllama.safetensors
  python3 scripts/export_hf.py --selftest out.safetensors [--dtype f16]

--selftest needs only the Python standard library: it writes a small
deterministic random sample (L=2, H=4, Hkv=2, N=16, d=8, prefix 12) and
reads the file back to check its layout.
"""

import argparse
import json
import math
import random
import struct
import sys

FORMAT = "1"
DTYPES = {"f32": ("F32", "<%df", 4), "f16": ("F16", "<%de", 2)}


def default_prefix(n):
    """HAE-OLS.md: prefix n defaults to N - min(64, N // 8)."""
    return n - min(64, n // 8)


def write_safetensors(path, tensors, metadata):
    """Write a safetensors file with the standard library only.

    tensors: list of (name, dtype, shape, raw little-endian bytes), written in
    order with contiguous data offsets (no gaps). metadata: str -> str.
    """
    header = {"__metadata__": {str(k): str(v) for k, v in metadata.items()}}
    offset = 0
    for name, dtype, shape, raw in tensors:
        width = {"F32": 4, "F16": 2, "BF16": 2}[dtype]
        want = width * math.prod(shape)
        if len(raw) != want:
            raise ValueError("tensor %s: %d bytes for shape %s, want %d" % (name, len(raw), shape, want))
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
    blob = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    blob += b" " * (-len(blob) % 8)  # pad the header to 8 bytes, as safetensors does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(blob)))
        f.write(blob)
        for _, _, _, raw in tensors:
            f.write(raw)


def read_safetensors_header(path):
    """Return (header dict, data section size) of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + n].decode("utf-8")), len(data) - 8 - n


def pack_floats(values, dtype):
    """Pack a flat list of floats as F32 or F16 little-endian bytes."""
    _, fmt, _ = DTYPES[dtype]
    try:
        return struct.pack(fmt % len(values), *values)
    except OverflowError:
        raise SystemExit("a value exceeds the F16 range (65504): use --dtype f32")


def metadata(model, source, prefix, scale, tokens, token_ids, description):
    return {
        "haeols.format": FORMAT,
        "model": model,
        "source": source,
        "prefix": str(prefix),
        "scale": repr(float(scale)),
        "tokens": json.dumps(tokens, ensure_ascii=False),
        "token_ids": json.dumps(token_ids, separators=(",", ":")),
        "description": description,
    }


def selftest(out, dtype):
    L, H, Hkv, N, d, prefix = 2, 4, 2, 16, 8, 12
    rng = random.Random(7)
    shapes = {"q": (L, H, N, d), "k": (L, Hkv, N, d), "v": (L, Hkv, N, d)}
    tensors = []
    for name, shape in shapes.items():
        vals = [rng.gauss(0.0, 1.0) for _ in range(math.prod(shape))]
        tensors.append((name, DTYPES[dtype][0], shape, pack_floats(vals, dtype)))
    tokens = ["t%d" % i for i in range(N)]
    meta = metadata("selftest", "export_hf.py --selftest seed=7 dtype=%s" % dtype, prefix,
                    1 / math.sqrt(d), tokens, list(range(N)),
                    "random normal q/k/v written by scripts/export_hf.py --selftest (no model)")
    write_safetensors(out, tensors, meta)

    header, size = read_safetensors_header(out)
    width = DTYPES[dtype][2]
    end = 0
    for name, shape in shapes.items():
        info = header[name]
        assert info["shape"] == list(shape), (name, info)
        assert info["data_offsets"] == [end, end + width * math.prod(shape)], (name, info)
        end = info["data_offsets"][1]
    assert end == size, (end, size)
    assert header["__metadata__"]["haeols.format"] == FORMAT
    assert json.loads(header["__metadata__"]["tokens"]) == tokens
    print("wrote %s: q %s, k %s, v %s, %s, prefix %d, %d data bytes" %
          (out, shapes["q"], shapes["k"], shapes["v"], DTYPES[dtype][0], prefix, size))


def export_hf(args):
    import importlib

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=torch.float32,
                                                 attn_implementation="eager")
    model.eval()
    ids = tok(args.prompt, return_tensors="pt").input_ids
    n_prompt = ids.shape[1]
    with torch.no_grad():
        if args.generate > 0:
            ids = model.generate(ids, max_new_tokens=args.generate, do_sample=False,
                                 min_new_tokens=args.generate)
    n = ids.shape[1]

    layers = model.model.layers
    L = len(layers)
    attn0 = layers[0].self_attn
    cfg = model.config
    head_dim = getattr(attn0, "head_dim", None) or getattr(cfg, "head_dim", None) \
        or cfg.hidden_size // cfg.num_attention_heads
    H = cfg.num_attention_heads
    Hkv = getattr(cfg, "num_key_value_heads", None) or H
    scale = getattr(attn0, "scaling", None) or head_dim ** -0.5

    q = [None] * L
    k = [None] * L
    v = [None] * L
    current = {"layer": None}
    handles = []
    originals = {}

    def make_rope(orig):
        def rope(qs, ks, *a, **kw):
            qe, ke = orig(qs, ks, *a, **kw)
            i = current["layer"]
            q[i] = qe[0].detach().float().cpu()  # [H, N, d]
            k[i] = ke[0].detach().float().cpu()  # [Hkv, N, d]
            return qe, ke
        return rope

    for i, layer in enumerate(layers):
        attn = layer.self_attn
        mod = importlib.import_module(type(attn).__module__)
        if not hasattr(mod, "apply_rotary_pos_emb"):
            raise SystemExit("%s defines no apply_rotary_pos_emb: not a LLaMA-style attention" % mod.__name__)
        if mod not in originals:
            originals[mod] = mod.apply_rotary_pos_emb
            mod.apply_rotary_pos_emb = make_rope(originals[mod])
        handles.append(attn.register_forward_pre_hook(lambda m, a, i=i: current.__setitem__("layer", i)))

        def v_hook(m, a, out, i=i):
            v[i] = out[0].detach().float().cpu().view(n, Hkv, head_dim).transpose(0, 1)
        handles.append(attn.v_proj.register_forward_hook(v_hook))
    try:
        with torch.no_grad():
            model(ids, use_cache=False)
    finally:
        for h in handles:
            h.remove()
        for mod, orig in originals.items():
            mod.apply_rotary_pos_emb = orig

    for name, got, heads in (("q", q, H), ("k", k, Hkv), ("v", v, Hkv)):
        for i, t in enumerate(got):
            if t is None or tuple(t.shape) != (heads, n, head_dim):
                raise SystemExit("layer %d: %s captured with shape %s, want %s" %
                                 (i, name, None if t is None else tuple(t.shape), (heads, n, head_dim)))
    Q = torch.stack(q).contiguous()
    K = torch.stack(k).contiguous()
    V = torch.stack(v).contiguous()
    tdtype = {"f32": torch.float32, "f16": torch.float16}[args.dtype]
    if args.dtype == "f16" and max(Q.abs().max(), K.abs().max(), V.abs().max()) > 65504:
        raise SystemExit("a value exceeds the F16 range (65504): use --dtype f32")

    def raw(t):
        return t.to(tdtype).numpy().astype("<" + {"f32": "f4", "f16": "f2"}[args.dtype]).tobytes()

    prefix = args.prefix or default_prefix(n)
    if not 2 <= prefix <= n:
        raise SystemExit("prefix %d outside [2, %d]" % (prefix, n))
    token_ids = ids[0].tolist()
    tokens = tok.convert_ids_to_tokens(token_ids)
    gen = n - n_prompt
    source = "hf capture %s prompt=%s generate=%d greedy prefix=%d dtype=%s" % (
        args.model, json.dumps(args.prompt, ensure_ascii=False), gen, prefix, args.dtype)
    desc = ("post-RoPE q/k/v of every layer and head of %s (%d layers, %d heads, %d KV heads, head dim %d) "
            "over %d positions: %d prompt tokens then %d generated greedily; the first %d positions are the "
            "cache, the last %d probe queries" % (args.model, L, H, Hkv, head_dim, n, n_prompt, gen, prefix, n - prefix))
    dt = DTYPES[args.dtype][0]
    write_safetensors(args.out, [("q", dt, tuple(Q.shape), raw(Q)), ("k", dt, tuple(K.shape), raw(K)),
                                 ("v", dt, tuple(V.shape), raw(V))],
                      metadata(args.model, source, prefix, scale, tokens, token_ids, desc))
    print("wrote %s: q %s k %s v %s %s prefix %d" % (args.out, tuple(Q.shape), tuple(K.shape), tuple(V.shape), dt, prefix))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", help="Hugging Face model id or local path")
    p.add_argument("--prompt", default="Once upon a time", help="prompt text")
    p.add_argument("--generate", type=int, default=0, help="greedy tokens appended to the prompt")
    p.add_argument("--prefix", type=int, default=0, help="cached positions (default N - min(64, N/8))")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="f32")
    p.add_argument("--out", help="output .safetensors file")
    p.add_argument("--selftest", metavar="OUT", help="write a small random sample without torch and check it")
    args = p.parse_args()
    if args.selftest:
        selftest(args.selftest, args.dtype)
    elif args.model and args.out:
        export_hf(args)
    else:
        p.error("give --model and --out, or --selftest OUT")


if __name__ == "__main__":
    main()

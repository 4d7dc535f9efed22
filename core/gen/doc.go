// Package gen makes synthetic attention samples: the post-RoPE queries, keys
// and values of a small made-up transformer whose heads show the structures
// real language models show (attention sinks, local heads, diffuse heads,
// retrieval heads, induction heads, grouped-query attention, outlier key
// channels), so that KV-cache compression methods behave differently, and
// instructively, on them.
//
//	c, _ := gen.DefaultConfig("default") // or "needle", "induction", "diffuse", "local", "tiny"
//	c.Seed = 7
//	s, err := gen.Generate(c) // *sample.Sample, ready for the methods or for writing
//
// Generation is deterministic: the same Config gives the same bits on every
// platform, including WebAssembly in the browser. The default sample takes
// about 50-60 ms of CPU natively and about 0.2 s under WebAssembly (Node),
// on one core.
//
// # What a sample holds
//
// N = Tokens positions: a prefix of n = Tokens - Probes cached tokens (the
// cache to compress) and Probes held-out probe queries. Meta.Tokens holds one
// word per position: paragraphs of topical text ("the captain of the harbor
// ... ."), a BOS token "<s>" at position 0, and, when Needles > 0, passkey
// sentences ("the passkey is 7 3 9 1 4 .") hidden in the prefix and a
// question at the very end of the probes ("what is the passkey ? the passkey
// is"). Meta.Needles lists the positions of the passkey digits,
// Meta.NeedleProbes the probe indices of the question tokens that ask for
// them ("passkey", "passkey", "is"). Meta.Description is the preset's
// description (its sizes are the preset's), Meta.Source says exactly how the
// sample was made ("generator default seed=1 L=4 H=4 Hkv=1 N=1024 n=960 d=64
// needles=1 rope_base=10000 gen=v1"), and Meta.Extra["head_kinds"] is the
// ground truth: a JSON array [L][H] of the kind of every query head.
//
// # The model
//
// Each position has a latent residual stream built from the text: a token
// embedding, the topic of its paragraph and a running context (an
// exponential average of the previous embeddings), so nearby tokens are
// correlated. Keys, queries and values are linear read-outs of named
// features of that stream, with per-head random projections; RoPE (base
// RopeBase, interleaved channel pairs (2p, 2p+1) turning at theta_p =
// base^(-2p/d)) is then applied to queries and keys. Logits are scale*q.k
// with scale = 1/sqrt(d).
//
// The channel pairs split by frequency, as in real models:
//
//   - fast pairs (theta_p >= 0.01) carry a positional feature: every key
//     holds the same vector there, and a query that holds it too scores
//     sum_p w_p cos(theta_p (i-j)), a recency kernel. Weights w_p = theta_p
//     / (1 + (theta_p width)^2) make it decay about as exp(-|i-j|/width).
//     Content is kept small in these pairs, because a component shared by
//     many keys would turn, through RoPE, into a spurious positional pattern;
//   - middle pairs carry topical content, which RoPE blurs with distance, so
//     content attention is semantic and somewhat local;
//   - slow pairs (those RoPE turns by less than a radian over half the
//     prefix) carry what must match at long range: a sink channel (large
//     only in the BOS key), a number channel (large only in passkey digits),
//     two outlier channels (a large, almost constant value in every key:
//     harmless to attention, which ignores constant shifts, hard on
//     per-token quantization) and induction codes.
//
// Query heads come in five kinds; every gain is set in logit units and
// jittered by -15%..+20% per head:
//
//   - sink: a large query bias along the sink channel (logit about 5.5 +
//     ln n), so most of the attention lands on the BOS token, plus weak
//     locality. The BOS value is small (sinks are no-ops), as in real models;
//   - local: a strong positional query (peak logit about 2.5 + ln n, width
//     about 12 tokens); about a third of them are previous-token heads,
//     whose kernel peaks one token back;
//   - diffuse: small queries with a topical lean: high row entropy;
//   - retrieval: diffuse like the above, except that query tokens that ask
//     for the passkey put a logit of about 11 on the number channel, so they
//     attend sharply to the digits wherever they are;
//   - induction: the key of position j carries codes of tokens j-1 and j-2
//     (what a previous-token head in an earlier layer would have written),
//     the query of position i codes of tokens i and i-1, so the query
//     attends to the token after earlier occurrences of its own token, and
//     most to the one whose previous token also matches (the continuation of
//     a copy). Codes come from two code books chosen for low mutual
//     coherence. Induction heads never sit in layer 0 of a multi-layer model.
//
// Query heads that share a KV head (grouped-query attention, head h uses KV
// head h/(H/Hkv)) have different kinds, so one compressed cache must serve
// all of them. Early layers lean local and sink, middle layers retrieval and
// induction, late layers diffuse (see the presets).
//
// Values are a random linear read-out of token, topic and context (rank at
// most 24) plus noise, with per-channel spread about 1.
//
// # Presets
//
// Sizes in F16 are 2*(L*H*N*d + 2*L*Hkv*N*d) bytes, plus a few KiB of
// metadata:
//
//	preset     L  H  Hkv  N     n     d   needles  F16 size
//	default    4  4  1    1024  960   64  1        3.0 MiB
//	needle     2  4  1    2048  1984  64  3        3.0 MiB
//	induction  2  4  1    1024  960   64  0        1.5 MiB
//	diffuse    2  4  1    1024  960   64  0        1.5 MiB
//	local      2  4  1    1024  960   64  0        1.5 MiB
//	tiny       1  2  1    64    56    16  1        8 KiB
//
// The default preset is the teaching sample: one passkey near the middle of
// the prefix, a repeated passage, one reminder ("keep the passkey in mind")
// in the calibration window whose query looks weakly at the passkey, and a
// question at the end of the probes. Its head dimension is 64 rather than 32
// because a head of 32 channels has too few slow pairs to tell a thousand
// tokens apart by content, which induction heads need; to stay within 3 MiB
// it has 4 query heads per layer on one KV head. The other presets isolate
// one behaviour each; Presets returns their descriptions, including what a
// compression method should find hard about each.
//
// # Determinism
//
// Every random number comes from xoshiro256** streams seeded from Seed and a
// fixed label per purpose (text, embeddings, each KV head, each query head,
// code books), so changing the model shape leaves the text unchanged.
// Gaussians use a ziggurat whose tables and rare branches use the package's
// own exp, log, sin and cos, built from correctly rounded operations only
// (the standard library's math.Exp and math.Log use assembly on some
// platforms). Every product that is added to something is rounded by an
// explicit float64 conversion, which stops the compiler from fusing it into
// a multiply-add on arm64, ppc64, s390x, riscv64 or amd64 v3: a test compiles
// the package for those targets and fails on any fused instruction. Another
// test pins the SHA-256 of the default sample's q, k and v and passes both
// natively and under GOOS=js GOARCH=wasm. There are no goroutines and no map
// iteration. Version (in Meta.Source) changes whenever the bits do.
//
// # Measured behaviour
//
// The tests compute softmax attention from the generated q and k and check
// every head of every preset at seeds 1 and 2 (calibration-window and probe
// queries, causal). Thresholds and measured ranges:
//
//	sink       attention on the first 4 tokens          > 0.5    0.92-1.00
//	local      attention on the last 32 tokens          > 0.5    0.87-0.98
//	diffuse    mean normalized row entropy              > 0.8    0.90-0.97
//	retrieval  question probes on the passkey digits    > 0.5    0.99-1.00
//	           calibration queries on them              < 1/10 of that
//	                                                             0.004-0.010 (tiny: 0.06-0.09)
//	induction  after earlier copies of the query token  > 0.5    0.64-0.82
//	           after earlier copies of its last two
//	           tokens (uniform attention: about 0.002)  > 0.25   0.45-0.56
//
// A sweep over seeds 1 to 8 stays above every threshold (lowest: sink 0.86,
// local 0.86, diffuse 0.84, retrieval 0.92, induction 0.58).
//
// The samples are made to look like real attention, never to favour a
// compression method: nothing in the generator knows about selection,
// summaries or budgets.
package gen

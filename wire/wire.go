// Package wire is the message protocol between the pages of the haeols web
// app (the vugu UI, the embed page) and the core running in a Web Worker,
// and between the UI and the ebiten heatmap page.
//
// Every message is a JSON string (encoding/json of these types), posted with
// postMessage as {json: "...", buffers: {name: ArrayBuffer, ...}}: large
// float arrays (attention maps) travel as transferred ArrayBuffers of
// little-endian float32 (or uint8 for classes) named in the JSON, never
// inside it. Numbers that can be NaN (metrics a method cannot produce) are
// encoded as null (result.Num).
//
// Maps for the app's heatmap page (Request.Direct) travel as relay
// messages, {json, buffers} with an Envelope (Relay RelayHeatmap, Key,
// View, Seq, ...), which the app page passes on to the heatmap page as
// they arrive, in order, without reading them. The key names the head's unchanging part: its original map (buffer
// "orig"), Maps.TokenText and Maps.Needles. The worker sends that part with
// the first message of a key and leaves it out while the heatmap page still
// holds it: both ends remember the keys sent with it in a Recent, fed the
// same keys in the same order, so they agree on what the heatmap page
// holds. OpHeatmapReset says the heatmap page (re)started and holds
// nothing.
//
// The ladder. For the view of the latest head request (its focus: the
// head, method, every parameter but the ratio, and the panel), the worker
// compresses the ratio slider's positions nearest first, the current step,
// then one either way, two, ..., over the slider's range (RatioSlider), and
// relays each position's maps once (Maps.Ladder). The heatmap page keeps
// every maps message it is relayed for the focus by slider step (a Ladder:
// a view of another focus replaces them all), and the worker keeps the same
// Ladder of views, fed the same views in the same order, so that both agree
// on what the page holds. On every change of the view the app page posts
// the heatmap page a show message, an Envelope of Show (the view) and Seq
// (the head request's ID), straight away; when the heatmap page holds that
// step it draws it at once, as the maps of that request, and the worker
// answers the request without maps (HeadResult.MapsDirect). A heatmap page
// never draws maps older (a lower Seq) than those on screen, nor the same
// view again.
package wire

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/haeols/haeols/core/result"
)

// Ops of a Request.
const (
	OpLoad  = "load"  // load a sample: Source
	OpGrid  = "grid"  // all heads for Method at Params, answered progressively
	OpHead  = "head"  // one head in detail: Layer, Head, Method, Params (+ maps)
	OpCurve = "curve" // error vs ratio for Methods at Ratios, one head or the model mean
	// OpCompute chooses where the core computes: Compute "cpu" or "gpu"
	// (WebGPU, with the CPU as the fallback). The loaded sample is analysed
	// again on the chosen device.
	OpCompute = "compute"
	// OpLadderDone is not a request: the worker sends it (Done) when it has
	// compressed every ratio slider position of the focused view and
	// relayed their maps (the ladder, see the package comment), so that
	// scrubbing the ratio only reuses kept caches and maps.
	OpLadderDone = "ladder-done"
	// OpHeatmapReset tells the worker that the app's heatmap page (re)started
	// and holds no head's unchanging maps part. It is not queued and has no
	// answer.
	OpHeatmapReset = "heatmap-reset"
	// OpPrompt runs Prompt through the model of the latest "llama" load
	// (kept by the worker, so its file is not sent again) and makes that
	// run the loaded sample, answered like a load (Info).
	OpPrompt = "prompt"
	// OpEval is what the model says with a compressed cache (HAE-OLS.md
	// §8): every layer's and KV head's prefix cache compressed by each of
	// Methods at Params, the continuation teacher-forced and a free run.
	// It is answered per method, in the order of Methods (the page puts
	// the primary method first, answered first without its free run, see
	// EvalResult), one Response with Eval each, the last one Done. Only a sample loaded from a model has it (Info.Eval).
	OpEval = "eval"
	// OpStop stops the running grid or curve and drops the queued ones,
	// without an answer: a worker that handed part of a grid to a helper
	// worker (Request.Heads) sends it when it no longer needs that part.
	OpStop = "stop"
)

// Barrier reports whether op orders the queue like a load: the requests
// sent after it wait for it, and it waits for those sent before.
func Barrier(op string) bool { return op == OpLoad || op == OpCompute || op == OpPrompt }

// NeedsModel says whether the request runs a language model: OpPrompt,
// OpEval, and loads of a checkpoint (Source kinds "llama" and
// "checkpoint"). The app's first worker (app.wasm) has no model runner;
// the page answers such a request with the worker that runs runner.wasm.
func (r Request) NeedsModel() bool {
	switch r.Op {
	case OpPrompt, OpEval:
		return true
	case OpLoad:
		return r.Source != nil && (r.Source.Kind == "llama" || r.Source.Kind == "checkpoint")
	}
	return false
}

// Request is a page's question to the worker. A newer request of the same Op
// supersedes an older one that is queued or still running (the worker drops
// it without an answer). Heads are answered before queued curves and grids,
// and between KV heads of a running grid or curve; grid and curve work is
// held back for 100 ms after each head request, so that a user scrubbing a
// slider gets each head at once. End-to-end evaluations (OpEval) come
// after heads and before curves and grids, and are not held back. A load
// (or OpPrompt, OpCompute) waits for the requests sent before it, and the
// requests sent after it wait for the load.
type Request struct {
	ID      int       `json:"id"`
	Op      string    `json:"op"`
	Source  *Source   `json:"source,omitempty"`
	Method  string    `json:"method,omitempty"`
	Methods []string  `json:"methods,omitempty"`
	Params  Params    `json:"params"`
	Layer   int       `json:"layer"`
	Head    int       `json:"head"` // -1 in OpCurve: the model mean
	Ratios  []float64 `json:"ratios,omitempty"`
	// Heads are the query heads an OpGrid asks for (nil: every head of the
	// model); a worker asks its helper workers for their share this way.
	Heads []result.HeadRef `json:"heads,omitempty"`
	// Maps asks OpHead for the attention maps: HeadResult.Maps with its
	// buffers (see Maps) on the final answer, or, with
	// Direct, a relay message for the heatmap page just before it (see the
	// package comment).
	Maps   bool `json:"maps,omitempty"`
	Direct bool `json:"direct,omitempty"`
	// Panel is what the heatmap page draws of the maps (Maps.Panel; ""
	// means "all").
	Panel string `json:"panel,omitempty"`
	// SentAt is when the page sent the request, performance.timeOrigin +
	// performance.now() in ms (a clock the worker shares), for measuring
	// how long it waited (Response.QueuedMs); 0 when not measured.
	SentAt float64 `json:"sent_at,omitempty"`
	// Compute is the device OpCompute asks for: "cpu" or "gpu".
	Compute string `json:"compute,omitempty"`
	// Prompt is what OpPrompt runs.
	Prompt *Prompt `json:"prompt,omitempty"`
	// Recompress is OpEval's decoding: the cache re-compressed every so
	// many decoded tokens (core.Params.Recompress; 0 compresses once).
	Recompress int `json:"recompress,omitempty"`
	// Shown is the view (ViewKey) the page asked its heatmap page to show
	// from its ladder for this request: when the worker relayed those
	// maps, it sends no maps again (HeadResult.MapsDirect).
	Shown string `json:"shown,omitempty"`
}

// Source says which sample to load. Kind "preset": generated in the worker
// from Preset and Seed; "url": fetched from the app's own static files
// (samples/...); "file": the bytes come in the message's buffer "file",
// named Name (a user's file, read locally, never uploaded); "llama": a
// llama2.c checkpoint in buffer "file", run locally to capture a sample;
// "checkpoint": a GGUF file or the files of a Hugging Face folder (a
// person's files, named in Files), run as "llama" is.
type Source struct {
	Kind   string `json:"kind"`
	Preset string `json:"preset,omitempty"`
	Seed   uint64 `json:"seed,omitempty"`
	URL    string `json:"url,omitempty"`
	Name   string `json:"name,omitempty"`
	// Tokens is the capture length for Kind "llama" (0: the model's context).
	Tokens int `json:"tokens,omitempty"`
	// For Kind "llama", the checkpoint comes from URL (one of the app's
	// own files, models/...) when it is set, else from the buffer "file".
	// Its llama2.c tokenizer, when there is one, comes from TokenizerURL
	// or from the buffer "tokenizer" (named Tokenizer). Prompt is what the
	// model runs (nil: DefaultPrompt).
	TokenizerURL string  `json:"tokenizer_url,omitempty"`
	Tokenizer    string  `json:"tokenizer,omitempty"`
	Prompt       *Prompt `json:"prompt,omitempty"`
	// Files are the base names of a "checkpoint" source's files (one
	// .gguf, or a folder's config.json, safetensors and tokenizer files),
	// each in the message's buffer of the same name; Name labels the
	// model (the GGUF file's name, the folder's). Prompt and Tokens are
	// as for "llama".
	Files []string `json:"files,omitempty"`
}

// Prompt is the sequence a model runs end to end (HAE-OLS.md §8), as
// `haeols eval` builds it: Task "" is BOS, Text (through the model's
// tokenizer) or IDs, then the model's greedy continuation up to Tokens
// positions, whose last ones are continued (Prefix); "passkey" and "copy"
// are eval.PassKey and eval.Copy of Tokens positions with their own split.
type Prompt struct {
	Task string `json:"task,omitempty"`
	Text string `json:"text,omitempty"`
	// IDs is a prompt in token ids (BOS first) for a model without a
	// tokenizer; nil: BOS.
	IDs []int `json:"ids,omitempty"`
	// Tokens is N (0: PromptTokens, TaskTokens for a task, or the model's
	// context if smaller);
	// Prefix the compressed positions (0: the task's split, or
	// N - min(64, N/8)); Gen the free run's length (0: PromptGen).
	Tokens int `json:"tokens,omitempty"`
	Prefix int `json:"prefix,omitempty"`
	Gen    int `json:"gen,omitempty"`
	// Depth is where a pass key sits in the filler (0 to 1); Seed chooses
	// the key or the copied words (0: 1, as the CLI's -seed).
	Depth float64 `json:"depth,omitempty"`
	Seed  uint64  `json:"seed,omitempty"`
}

// The defaults of a Prompt in the browser: shorter than the CLI's (512
// positions, a free run of 64), so that a slider move gets its method's
// end-to-end numbers quickly.
const (
	PromptTokens = 256
	PromptGen    = 32
	// TaskTokens is a task's N: a pass key's fixed text alone takes
	// about 230 byte tokens.
	TaskTokens = 384
	// MaxPromptText bounds a prompt's text (bytes).
	MaxPromptText = 4096
)

// Params are the method parameters a user can change (core.Params).
type Params struct {
	Ratio  float64 `json:"ratio"`
	Lambda float64 `json:"lambda"`
	Phi    float64 `json:"phi"`
	Tau    float64 `json:"tau"`
	// Budget is the policy sharing Ratio's total among the KV heads
	// (Budgets; "" is uniform).
	Budget string `json:"budget,omitempty"`
}

// Recompressions are the browser's choices of Request.Recompress, the
// default (once) first.
var Recompressions = []int{0, 4, 8, 16, 32}

// Budgets are the budget policies (core.Budgets), the default first.
var Budgets = []string{"uniform", "pyramid", "adakv", "hae"}

// Response is the worker's answer. Exactly one of the payload fields is set,
// or Error (a message for the user; the worker keeps its previous state).
type Response struct {
	ID    int         `json:"id"`
	Op    string      `json:"op"`
	Error string      `json:"error,omitempty"`
	Info  *Info       `json:"info,omitempty"`
	Grid  *GridPart   `json:"grid,omitempty"`
	Head  *HeadResult `json:"head,omitempty"`
	Curve *Curve      `json:"curve,omitempty"`
	// Compute answers OpCompute: the device now in use.
	Compute *Compute `json:"compute,omitempty"`
	// Eval answers OpEval: one method's end-to-end result.
	Eval *EvalResult `json:"eval,omitempty"`
	// Progress in [0, 1] for long operations (loading a checkpoint, a grid).
	Progress float64 `json:"progress,omitempty"`
	// Done is false on progressive partial answers.
	Done bool `json:"done"`
	// ComputeMs is the time the worker spent on the request so far, from
	// taking it off its queue to sending this answer (milliseconds; for
	// measuring, not for display logic).
	ComputeMs float64 `json:"compute_ms,omitempty"`
	// QueuedMs is how long the request waited before the worker took it:
	// from Request.SentAt (0: from its arrival in the worker's queue),
	// through delivery while the worker finished a unit of other work, to
	// the start of its computation (for measuring).
	QueuedMs float64 `json:"queued_ms,omitempty"`
}

// Compute says where the core computes: Device "cpu" or "gpu", the GPU
// adapter, and, when the GPU was asked for and is not used, why (Note).
type Compute struct {
	Device  string `json:"device"`
	Adapter string `json:"adapter,omitempty"`
	// Software marks a software GPU adapter (SwiftShader, llvmpipe): it
	// computes the same numbers, usually slower than the CPU kernels.
	Software bool   `json:"software,omitempty"`
	Note     string `json:"note,omitempty"`
}

// Info describes the loaded sample.
type Info struct {
	Name         string   `json:"name"`
	Model        string   `json:"model"`
	Source       string   `json:"source"`
	Description  string   `json:"description"`
	Layers       int      `json:"layers"`
	Heads        int      `json:"heads"`
	KVHeads      int      `json:"kv_heads"`
	Tokens       int      `json:"tokens"` // N
	Prefix       int      `json:"prefix"` // n
	Dim          int      `json:"dim"`
	TokenText    []string `json:"token_text,omitempty"`
	Needles      []int    `json:"needles,omitempty"`
	NeedleProbes []int    `json:"needle_probes,omitempty"`
	Methods      []Method `json:"methods"`
	// Defaults are the core's default parameters (core.DefaultRatio,
	// core.DefaultParams) and Sliders their ranges (the package's
	// Sliders), for a page that does not link the core (the embed page).
	Defaults Params   `json:"defaults"`
	Sliders  []Slider `json:"sliders"`
	// Eval is set when the sample is a model's run of a prompt: what
	// OpEval compares against.
	Eval *EvalInfo `json:"eval,omitempty"`
}

// Span is a range [Start, End) of token positions.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// EvalInfo is a prompt run through a model with the full cache (the
// reference of eval.Prepare): the sequence, its split, and what the full
// cache predicts and generates. Texts are per token: a token's text as
// the model's tokenizer decodes it after the token before (the token id
// in decimal for a model without a tokenizer).
type EvalInfo struct {
	Model     string `json:"model"`
	Tokenizer bool   `json:"tokenizer"`
	Vocab     int    `json:"vocab"`
	Context   int    `json:"context"`
	// Prompt is the prompt as run (its defaults filled in).
	Prompt Prompt `json:"prompt"`
	// Key is a task's pass key or copied passage.
	Key    string   `json:"key,omitempty"`
	IDs    []int    `json:"ids"`
	Text   []string `json:"text"`
	Prefix int      `json:"prefix"`
	// Answers are the spans the model should predict (a pass key's
	// digits); Needles the positions in the prefix it must find them at
	// (also the sample's needles, marked in the heatmaps).
	Answers []Span `json:"answers"`
	Needles []int  `json:"needles,omitempty"`
	// Top is the full cache's most likely token after each position
	// Prefix-1 .. N-1, Free its free run after the prefix (FreeText per
	// token), Found per answer span whether it predicts every token.
	Top       []int      `json:"top"`
	Free      []int      `json:"free"`
	FreeText  []string   `json:"free_text"`
	Found     []bool     `json:"found"`
	NeedleAcc result.Num `json:"needle_acc"`
}

// EvalResult is one method at one ratio end to end (eval.Result): the
// metrics of HAE-OLS.md §8, the per-position KL of the teacher-forced
// continuation (KLs[i] is that of the prediction after position
// Prefix+i), and the free run. The primary method (the first of an
// OpEval) is answered twice: first without its free run (FreePending,
// Diverge -1: the continuation's numbers are ready at half the cost),
// then whole.
type EvalResult struct {
	Params     Params `json:"params"`
	Recompress int    `json:"recompress,omitempty"` // the request's`
	result.Eval
	// FreeText is the free run's tokens as text, one string per token
	// (Free); FreePending says that the free run is still to come.
	FreeText    []string `json:"free_text,omitempty"`
	FreePending bool     `json:"free_pending,omitempty"`
}

// Method names and describes one compression method.
type Method struct {
	Name     string `json:"name"`
	Describe string `json:"describe"`
}

// GridPart carries the cells of one KV head's query heads (their
// Metrics without Profile and Needles); the last part has Done set on the
// Response and MeanErr filled.
type GridPart struct {
	Method  string           `json:"method"`
	Ratio   float64          `json:"ratio"`
	Cells   []result.Metrics `json:"cells"`
	MeanErr result.Num       `json:"mean_err"`
	// NA explains why the method has no numbers at this ratio (e.g. quant
	// below its smallest width); Cells is then empty.
	NA string `json:"na,omitempty"`
	// Workers, in the final part, is how many workers computed the grid:
	// the worker and the helper workers that answered their share.
	Workers int `json:"workers,omitempty"`
}

// HeadResult is one head in detail: the request's Method, and, unless NA
// says why the method has none at this ratio, the head's Metrics (with the
// error per probe query, Profile, and the needle tokens' fates), the
// cache's Stages, its budget and the full cache's bits (core.Budget).
type HeadResult struct {
	Method     string         `json:"method"`
	Metrics    result.Metrics `json:"metrics"`
	Stages     result.Stages  `json:"stages"`
	BudgetBits int64          `json:"budget_bits"`
	FullBits   int64          `json:"full_bits"`
	NA         string         `json:"na,omitempty"`
	// Maps is the heatmap page's message for the attention maps, whose
	// buffers come with this answer, when they were asked for and not sent
	// to the heatmap page directly; MapsDirect says they were.
	Maps       *Maps `json:"maps,omitempty"`
	MapsDirect bool  `json:"maps_direct,omitempty"`
	// Model numbers the worker's model (a new sample or compute device is
	// a new model), for the page's ViewKey; 0 when unknown.
	Model int `json:"model,omitempty"`
}

// Curve is error vs ratio: Err[m][r] for Methods[m] at Ratios[r] (null
// where the method does not fit that ratio).
type Curve struct {
	Layer   int            `json:"layer"`
	Head    int            `json:"head"`
	Methods []string       `json:"methods"`
	Ratios  []float64      `json:"ratios"`
	Err     [][]result.Num `json:"err"`
}

// Maps is the message to the heatmap page (buffers "orig" Rows x Cols
// float32, the compressed map as "comp" (the same) or factored (see
// Factored), "classes" Cols uint8, "segments" Cols int32). The worker
// makes it; the page that asked forwards it, or the app page relays it
// (Request.Direct; see the package comment).
type Maps struct {
	Title     string     `json:"title"`
	Method    string     `json:"method"`
	Ratio     float64    `json:"ratio"`
	Err       result.Num `json:"err"`
	Rows      int        `json:"rows"`
	Cols      int        `json:"cols"`
	Calib     int        `json:"calib"`
	TokenText []string   `json:"token_text,omitempty"` // per column (prefix) and per probe row
	Needles   []int      `json:"needles,omitempty"`
	// Panel selects what to draw: "all" (original | compressed | difference),
	// or one of "orig", "comp", "diff".
	Panel string `json:"panel"`
	// Seq is the sender's number for the message, echoed in
	// "heatmap-drawn" (0: none).
	Seq int `json:"seq,omitempty"`
	// Factored says that the compressed map comes in the factored form of
	// package attnmap, in the buffers "scale" and "inv" (Rows float32
	// each), "syn" (Rows x Syn float32), "share" (Cols float32) and
	// "source" (Cols int32), instead of the buffer "comp"; Syn is its
	// number of synthetic tokens.
	Factored bool `json:"factored,omitempty"`
	Syn      int  `json:"syn,omitempty"`
	// View is the ViewKey of these maps ("" when unknown).
	View string `json:"view,omitempty"`
	// Ladder marks maps relayed before anyone asked for them (a step of
	// the ladder): the heatmap page keeps them for a show message of their
	// View and does not draw them on arrival (see the package comment).
	Ladder bool `json:"ladder,omitempty"`
}

// ViewKey names what a head's maps show: the worker's model (HeadResult.Model),
// the head, the method, every parameter and the panel. Two maps with the
// same key are the same maps. ViewPrefix(key) is the key without the
// ratio: the maps a person reaches with the ratio slider share it.
func ViewKey(model, layer, head int, method string, p Params, panel string) string {
	if panel == "" {
		panel = "all"
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	return fmt.Sprintf("%d/%d/%d/%s/%s/%s/%s/%s@%s", model, layer, head, method, f(p.Lambda), f(p.Phi), f(p.Tau), panel, f(p.Ratio))
}

// ViewPrefix is a ViewKey without its ratio.
func ViewPrefix(key string) string {
	if i := strings.LastIndexByte(key, '@'); i >= 0 {
		return key[:i]
	}
	return key
}

// LadderMaxBytes bounds the buffers a Ladder holds (about 50 kB a map on
// the default sample, whose 99 slider steps take 5 MB; a long sample's maps
// are larger): a view that would pass it is not held, and the worker relays
// no more ladder maps for the focus.
const LadderMaxBytes = 16 << 20

// HeadTitle is the heatmap's title for a head (the renderer adds method,
// ratio and error, in a bitmap font: ASCII only).
func HeadTitle(layer, head int) string { return fmt.Sprintf("layer %d, head %d", layer, head) }

// RecentKeys is how many heads' unchanging maps parts the heatmap page
// holds (each about 0.8 MB for the default sample).
const RecentKeys = 4

// Recent remembers values by key: the last RecentKeys distinct keys put,
// oldest out first (putting a key it holds makes it the newest). The
// worker and the heatmap page each keep one and put the same keys in the
// same order, so they agree on what the heatmap page holds; and when the
// worker's starts afresh (OpHeatmapReset) while the page's does not, the
// worker's keys stay the newest of the page's, so the page still holds
// every key the worker thinks it does. The zero value is empty and ready
// to use.
type Recent[V any] struct {
	keys []string
	vals []V
}

// Get returns the value put for key, if it is still held.
func (r *Recent[V]) Get(key string) (V, bool) {
	for i, k := range r.keys {
		if k == key {
			return r.vals[i], true
		}
	}
	var zero V
	return zero, false
}

// Put holds v for key, forgetting the oldest key past RecentKeys.
func (r *Recent[V]) Put(key string, v V) {
	for i, k := range r.keys {
		if k == key {
			r.keys = append(r.keys[:i], r.keys[i+1:]...)
			r.vals = append(r.vals[:i], r.vals[i+1:]...)
			break
		}
	}
	if len(r.keys) == RecentKeys {
		var zero V
		r.vals[0] = zero
		r.keys, r.vals = r.keys[1:], r.vals[1:]
	}
	r.keys, r.vals = append(r.keys, key), append(r.vals, v)
}

// Reset forgets everything.
func (r *Recent[V]) Reset() { r.keys, r.vals = nil, nil }

// Ladder holds maps by ratio slider step, all of one focus (the
// ViewPrefix of the latest put; a view of another prefix forgets the others
// first), at most LadderMaxBytes of buffers (see the package comment). The
// worker and the heatmap page each keep one and put the same views in the
// same order. The zero value is empty and ready to use.
type Ladder[V any] struct {
	prefix string
	steps  map[int]V
	bytes  int
	full   bool
}

// Put keeps v, of size bytes, for view and reports whether it did: a view
// that would take the ladder past LadderMaxBytes (or without a ratio) is
// refused, and the ladder is Full from then on.
func (l *Ladder[V]) Put(view string, v V, size int) bool {
	p, step, ok := ViewStep(view)
	if !ok {
		return false
	}
	if p != l.prefix || l.steps == nil {
		l.prefix, l.steps, l.bytes, l.full = p, map[int]V{}, 0, false
	}
	if _, held := l.steps[step]; !held {
		if l.bytes+size > LadderMaxBytes {
			l.full = true
			return false
		}
		l.bytes += size
	}
	l.steps[step] = v
	return true
}

// Get returns what was put for view, if it is held.
func (l *Ladder[V]) Get(view string) (V, bool) {
	p, step, ok := ViewStep(view)
	if !ok || p != l.prefix {
		var zero V
		return zero, false
	}
	v, ok := l.steps[step]
	return v, ok
}

// Step returns what was put for the slider step of the ladder's focus, if
// it is held.
func (l *Ladder[V]) Step(step int) (V, bool) {
	v, ok := l.steps[step]
	return v, ok
}

// Prefix is the ViewPrefix of the ladder's views ("" when empty).
func (l *Ladder[V]) Prefix() string { return l.prefix }

// Len is how many steps are held.
func (l *Ladder[V]) Len() int { return len(l.steps) }

// Full reports whether a view of the ladder's focus was refused.
func (l *Ladder[V]) Full() bool { return l.full }

// Reset forgets everything.
func (l *Ladder[V]) Reset() { *l = Ladder[V]{} }

// RatioStep is the ratio slider's step of ratio r (RatioSlider: r x
// PerUnit, rounded).
func RatioStep(r float64) int { return int(math.Round(r * RatioSlider.PerUnit())) }

// StepRatio is the ratio of slider step k, k / PerUnit (division: the same
// float64 as the slider's value parsed).
func StepRatio(k int) float64 { return float64(k) / RatioSlider.PerUnit() }

// ViewStep splits a ViewKey into its prefix (ViewPrefix) and the ratio
// slider step of its ratio; false when it ends with no ratio or one that
// is not a slider step.
func ViewStep(key string) (prefix string, step int, ok bool) {
	i := strings.LastIndexByte(key, '@')
	if i < 0 {
		return "", 0, false
	}
	r, err := strconv.ParseFloat(key[i+1:], 64)
	if err != nil || StepRatio(RatioStep(r)) != r {
		return "", 0, false
	}
	return key[:i], RatioStep(r), true
}

// Screen is what a heatmap page shows: its maps' View and Seq ("" and 0
// when unknown).
type Screen struct {
	View string
	Seq  int
}

// Wants reports whether maps of view with seq should replace those on
// screen: not maps older than them (a lower Seq, both known), and not the
// same view again (both known).
func (s Screen) Wants(view string, seq int) bool {
	if seq > 0 && s.Seq > 0 && seq < s.Seq {
		return false
	}
	return view == "" || view != s.View
}

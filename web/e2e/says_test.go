package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/haeols/haeols/core/llama"
)

// saysReady is true when the "What the model says" view shows the primary
// method's end-to-end numbers at the ratio slider's value, and no load or
// prompt runs.
const saysReady = `(() => {
	const t = document.getElementById("says-table");
	const kl = t && t.querySelector("tr.primary td[data-name=kl]");
	return !!kl && kl.dataset.v !== "" && t.dataset.ratio === document.getElementById("ratio").value &&
		!document.querySelector(".status .loading");
})()`

// saysState describes the view for a failed wait.
const saysState = `JSON.stringify({error: (document.getElementById("error") || {}).innerText, loading: (document.querySelector(".status") || {}).innerText,
	table: (document.getElementById("says-table") || {}).outerHTML, ratio: document.getElementById("ratio").value})`

// bundledModel skips the test unless `make web` bundled the model (from
// ../shared/models).
func bundledModel(t *testing.T, name string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(DistDir(), "models", name)); err != nil {
		t.Skipf("web/dist/models/%s not bundled (../shared/models/%s missing when make web ran)", name, name)
	}
}

// TestAppSaysKJV opens the bundled byte model on the pass-key preset and
// shows what it says with the full cache and with HAE-OLS.
func TestAppSaysKJV(t *testing.T) {
	bundledModel(t, "kjv3m.bin")
	appSetup(t)
	site := StartSite(t)
	b := NewBrowser(t)
	b.Navigate(site.URL + "index.html?sample=models/kjv3m.bin&task=passkey&depth=0.5&ratio=0.2")
	b.WaitFor(saysReady, 180*time.Second, saysState)
	// The per-head views show the heads of this run: the pass key's
	// digits are the sample's needles. The heatmap page draws once its
	// iframe is on screen (Chromium does not animate an off-screen
	// cross-origin frame), below the model's view.
	if n := MustEval[int](b, `(document.querySelector(".says .seq .needle") ? 1 : 0) + [...document.querySelectorAll(".says .seq .needle")].length`); n != 6 {
		t.Errorf("%d needle tokens marked in the sequence, want the key's 5 digits", n-1)
	}
	MustEval[bool](b, `(() => { document.getElementById("heatmap-host").scrollIntoView(); return true })()`)
	b.WaitFor(`window.haeolsTimings && window.haeolsTimings.drawn`, 120*time.Second, `JSON.stringify(Object.keys(window.haeolsTimings || {}))`)
	MustEval[bool](b, `(() => { window.scrollTo(0, 0); return true })()`)
	b.WaitFor(saysAllDone, 180*time.Second, saysState)
	appShot(t, b, "app-says-kjv3m-passkey")
	elementShot(t, b, "#says", "app-says-view", "")
}

// TestAppSaysInduction opens the constructed induction model that `make
// web` always bundles (models/induction.gguf) on the pass-key task: the
// full cache answers the key, and every compared method's numbers, its
// needle_acc included, equal `haeols eval -json` on the same file to the
// last bit.
func TestAppSaysInduction(t *testing.T) {
	appSetup(t)
	site := StartSite(t)
	b := NewBrowser(t)
	const methods = "hae-ols,snapkv,streaming,lowrank"
	b.Navigate(site.URL + "index.html?sample=models/induction.gguf&task=passkey&depth=0.3&ratio=0.3&compute=cpu&methods=" + methods)
	b.WaitFor(saysAllDone, 180*time.Second, saysState)
	got := MustEval[saysShown](b, saysShownJS)
	doc := cliEval(t, "-task", "passkey", "-depths", "0.3", "-tokens", "384", "-gen", "32", "-ratios", "0.3", "-methods", methods,
		filepath.Join(DistDir(), "models", "induction.gguf"))
	if got.Seq != doc.Sequences[0].Text {
		t.Errorf("sequence text:\n browser %q\n CLI     %q", got.Seq, doc.Sequences[0].Text)
	}
	saysMatchesCLI(t, got, doc)
	if n := MustEval[int](b, `document.querySelectorAll(".says .seq .needle").length`); n != 5 {
		t.Errorf("%d needle tokens marked in the sequence, want the key's 5 digits", n)
	}
	if acc := got.Rows["lowrank"]["needle_acc"]; acc != "1" {
		t.Errorf("lowrank at 0.3: needle_acc %s, want 1 (as the CLI finds)", acc)
	}
	if acc := got.Rows["streaming"]["needle_acc"]; acc != "0" {
		t.Errorf("streaming at 0.3, the key at depth 0.3 of 384 tokens: needle_acc %s, want 0", acc)
	}
	appShot(t, b, "app-says-induction-passkey")
	elementShot(t, b, "#says", "app-says-induction-view", " (README's assets/screenshot-says.png)")
}

// TestAppRecompress opens the induction model's pass key with the cache
// re-compressed every 8 decoded tokens (recompress=8 in the link): the
// picker shows it, the sentence above the sequence names the peak memory,
// and every method's numbers equal `haeols eval -json -recompress 8`.
// Changing the picker to once gives `haeols eval` without it.
func TestAppRecompress(t *testing.T) {
	appSetup(t)
	site := StartSite(t)
	b := NewBrowser(t)
	const methods = "hae-ols,streaming,quant"
	b.Navigate(site.URL + "index.html?sample=models/induction.gguf&task=passkey&depth=0.9&ratio=0.3&compute=cpu&recompress=8&methods=" + methods)
	b.WaitFor(saysAllDone, 180*time.Second, saysState)
	if v := MustEval[string](b, `document.getElementById("recompress").value`); v != "8" {
		t.Errorf("the picker shows %q, want 8", v)
	}
	about := MustEval[string](b, `document.getElementById("says-about").innerText`)
	if !strings.Contains(about, "re-compressed every 8 tokens") || !strings.Contains(about, "peak") {
		t.Errorf("the sentence above the sequence: %q", about)
	}
	model := filepath.Join(DistDir(), "models", "induction.gguf")
	args := []string{"-task", "passkey", "-depths", "0.9", "-tokens", "384", "-gen", "32", "-ratios", "0.3", "-methods", methods, model}
	got := MustEval[saysShown](b, saysShownJS)
	saysMatchesCLI(t, got, cliEval(t, append([]string{"-recompress", "8"}, args...)...))
	elementShot(t, b, "#says", "app-says-recompress", "")

	MustEval[bool](b, `(() => { const s = document.getElementById("recompress"); s.value = "0"; s.dispatchEvent(new Event("change", {bubbles: true})); return true })()`)
	b.WaitFor(saysAllDone+` && !location.search.includes("recompress")`, 180*time.Second, saysState)
	saysMatchesCLI(t, MustEval[saysShown](b, saysShownJS), cliEval(t, args...))
}

// byteModel writes a small random llama2.c model with byte tokens (vocab
// 259: 0 <unk>, 1 BOS, 2 EOS, 3+b the byte b) and its tokenizer file
// into dir, as cmd/haeols's tests do.
func byteModel(t *testing.T, dir string) (model, tok string) {
	t.Helper()
	m, err := llama.Random(llama.Config{Dim: 32, HiddenDim: 48, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 259, SeqLen: 320, SharedClassifier: true}, 11)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	model = filepath.Join(dir, "bytes.bin")
	if err := os.WriteFile(model, b, 0o644); err != nil {
		t.Fatal(err)
	}
	tb := llama.ByteTokenizerFile()
	tok = filepath.Join(dir, "bytes.tokenizer.bin")
	if err := os.WriteFile(tok, tb, 0o644); err != nil {
		t.Fatal(err)
	}
	return model, tok
}

// cliEval runs `haeols eval -json` (built from this repository) and
// decodes its document.
func cliEval(t *testing.T, args ...string) cliDoc {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "haeols")
	build := exec.Command("go", "build", "-o", bin, "./cmd/haeols")
	build.Dir = RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/haeols: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"eval", "-json"}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("haeols eval %v: %v", args, err)
	}
	var doc cliDoc
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("haeols eval -json: %v", err)
	}
	return doc
}

// cliDoc is the part of `haeols eval -json` the browser is checked against.
type cliDoc struct {
	Sequences []struct {
		Prefix int    `json:"prefix"`
		IDs    []int  `json:"ids"`
		Text   string `json:"text"`
		Full   struct {
			FreeText string `json:"free_text"`
		} `json:"full"`
	} `json:"sequences"`
	Records []struct {
		Method   string     `json:"method"`
		Ratio    float64    `json:"ratio"`
		NA       string     `json:"na"`
		Used     *float64   `json:"used"`
		Peak     *float64   `json:"peak"`
		KL       *float64   `json:"kl"`
		KLMax    *float64   `json:"kl_max"`
		Agree    *float64   `json:"agree"`
		PPL      *float64   `json:"ppl_ratio"`
		Diverge  *int       `json:"diverge"`
		Needle   *float64   `json:"needle_acc"`
		KLs      []*float64 `json:"kl_profile"`
		FreeText string     `json:"free_text"`
	} `json:"records"`
}

// saysShown is what the view shows, read from the page: the sequence's
// and the free runs' texts, each method's numbers in full precision
// (data-v), and the primary method's per-position KL (data-kl).
type saysShown struct {
	Seq, Full, Method string
	Rows              map[string]map[string]string
	KLs               []string
}

const saysShownJS = `(() => {
	const toks = (sel) => [...document.querySelectorAll(sel + " .tok[data-pos]")].map(e => e.textContent).join("");
	const rows = {};
	for (const tr of document.querySelectorAll("#says-table tbody tr")) {
		const r = {};
		for (const td of tr.querySelectorAll("td[data-name]")) r[td.dataset.name] = td.dataset.v;
		rows[tr.dataset.method] = r;
	}
	const kls = [...document.querySelectorAll("#says-seq [data-kl]")].map(e => e.dataset.kl);
	return {Seq: toks("#says-seq"), Full: toks("#says-full"), Method: toks("#says-method"), Rows: rows, KLs: kls};
})()`

// saysAllDone is saysReady with every compared method's numbers shown.
const saysAllDone = saysReady + ` && [...document.querySelectorAll("#says-table tbody td[data-name=kl], #says-table tbody td[data-name=diverge]")].every(td => td.textContent !== "…")`

// TestAppSaysMatchesCLI opens a random byte-token llama2.c model with its
// tokenizer through the file input (both files at once), types a prompt
// and presses Enter, moves the ratio, and checks that the texts side by
// side and every compared method's numbers equal `haeols eval -json` for
// the same model, prompt, methods and ratio, to the last bit.
func TestAppSaysMatchesCLI(t *testing.T) {
	appSetup(t)
	dir := t.TempDir()
	model, tok := byteModel(t, dir)
	site := StartSite(t)
	b := NewBrowser(t)
	b.Navigate(site.URL + "index.html?methods=hae-ols,topk,snapkv,quant&method=hae-ols&compute=cpu")
	b.WaitFor(appGridDone, 90*time.Second, "")
	if _, err := chromedp.Run(b.Ctx, chromedp.SetUploadFiles("#file-input", []string{model, tok})); err != nil {
		t.Fatalf("choosing the model and its tokenizer: %v", err)
	}
	b.WaitFor(saysReady, 120*time.Second, saysState)
	const prompt = "The pass key is 4821. Remember it."
	runPrompt(b, prompt)
	setSlider(b, "ratio", 0.25)
	b.WaitFor(saysAllDone, 120*time.Second, saysState)
	got := MustEval[saysShown](b, saysShownJS)

	doc := cliEval(t, "-z", tok, "-text", prompt, "-tokens", "256", "-gen", "32", "-ratios", "0.25", "-methods", "hae-ols,topk,snapkv,quant", model)
	s := doc.Sequences[0]
	if got.Seq != s.Text {
		t.Errorf("sequence text:\n browser %q\n CLI     %q", got.Seq, s.Text)
	}
	saysMatchesCLI(t, got, doc)
	if q := appQuery(t, b); q.Get("prompt") != prompt || q.Get("task") != "" || q.Get("sample") != "file:bytes.bin" {
		t.Errorf("the URL does not hold the prompt: %v", q)
	}
	for _, p := range site.Requests() {
		if strings.Contains(p, "bytes") {
			t.Errorf("a local file went to the server: %s", p)
		}
	}
	appShot(t, b, "app-says-random-bytes")
}

// saysMoveJS moves the ratio slider to %q as a drag's step does and
// resolves with the milliseconds until the page shows the primary
// method's end-to-end numbers at that ratio (polled every frame).
const saysMoveJS = `new Promise((resolve) => {
	const s = document.getElementById("ratio");
	const t0 = performance.now();
	s.value = %q;
	s.dispatchEvent(new Event("input", {bubbles: true}));
	const poll = () => {
		const t = document.getElementById("says-table");
		const kl = t && t.querySelector("tr.primary td[data-name=kl]");
		if (t && t.dataset.ratio === s.value && kl && kl.dataset.v !== "") { resolve(performance.now() - t0); return; }
		if (performance.now() - t0 > 30000) { resolve(-1); return; }
		requestAnimationFrame(poll);
	};
	poll();
})`

// TestAppSaysLatency measures, for the bundled byte model on its default
// prompt (256 tokens, 32 continued, a free run of 32), the time from a
// ratio slider move to the primary method's end-to-end numbers on the
// page, over 12 moves to ratios not computed before, one at a time; it
// logs the median and p90 (and the worker's share), and checks only a
// generous bound.
func TestAppSaysLatency(t *testing.T) {
	bundledModel(t, "kjv3m.bin")
	appSetup(t)
	site := StartSite(t)
	b := NewBrowser(t)
	b.Navigate(site.URL + "index.html?sample=models/kjv3m.bin&ratio=0.3&compute=cpu")
	b.WaitFor(saysAllDone, 180*time.Second, saysState)
	// The per-head views' first answers too (the grid and the curve): the
	// moves then compete with little but what they ask (and the worker's
	// ladder of the head's ratios).
	b.WaitFor(`document.querySelector("#curve svg path") !== null && window.haeolsTimings.grid`, 240*time.Second,
		`JSON.stringify(Object.keys(window.haeolsTimings || {}))`)
	var page []float64
	for i := 1; i <= 12; i++ {
		ms := MustEval[float64](b, fmt.Sprintf(saysMoveJS, strconv.FormatFloat(0.3+float64(i)/100, 'f', 2, 64)))
		if ms < 0 {
			t.Fatalf("move %d: no end-to-end numbers within 30 s (%s)", i, MustEval[string](b, saysState))
		}
		page = append(page, ms)
		time.Sleep(400 * time.Millisecond) // a person's next step
	}
	compute := MustEval[[]float64](b, `window.haeolsTimings.evalCompute.slice(-12)`)
	queued := MustEval[[]float64](b, `window.haeolsTimings.evalQueued.slice(-12)`)
	free := MustEval[[]float64](b, `window.haeolsTimings.evalFree.slice(-12)`)
	med, p90 := quantile(page, 0.5), quantile(page, 0.9)
	t.Logf("slider move -> end-to-end numbers (kl, agree, ppl_ratio, needle_acc) of hae-ols on kjv3m (256 tokens, 32 continued), 12 moves: median %.0f ms, p90 %.0f ms (in the worker: queued %.0f ms, computing %.0f ms, medians); its free run of 32 tokens too: median %.0f ms, p90 %.0f ms; all: %.0f",
		med, p90, quantile(queued, 0.5), quantile(compute, 0.5), quantile(free, 0.5), quantile(free, 0.9), page)
	if med > 20000 {
		t.Errorf("median %.0f ms: the end-to-end numbers do not follow the slider", med)
	}
	appShot(t, b, "app-says-kjv3m")
}

// quantile is the q-quantile of xs (nearest rank).
func quantile(xs []float64, q float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return math.NaN()
	}
	return s[min(len(s)-1, int(math.Ceil(q*float64(len(s))))-1)]
}

// TestEmbedSays embeds what the bundled byte model says on a prompt: the
// two free runs side by side and the method's numbers, equal to `haeols
// eval -json` for the same prompt, method and ratio.
func TestEmbedSays(t *testing.T) {
	bundledModel(t, "kjv3m.bin")
	site := StartSite(t)
	b := NewBrowser(t)
	const prompt = "And God said, Let there be light"
	b.Navigate(site.URL + "embed.html?sample=models/kjv3m.bin&method=snapkv&ratio=0.2&prompt=" + strings.ReplaceAll(prompt, " ", "%20"))
	b.WaitFor(`window.haeolsEmbed && window.haeolsEmbed.says && window.haeolsEmbed.says.ratio === 0.2 && !document.getElementById("says").hidden`, 180*time.Second, `JSON.stringify(window.haeolsEmbed && window.haeolsEmbed.errors)`)
	got := MustEval[map[string]any](b, `({full: document.getElementById("says-full").textContent, method: document.getElementById("says-method").textContent,
		kl: window.haeolsEmbed.says.kl, agree: window.haeolsEmbed.says.agree, readout: document.getElementById("readout").textContent,
		heatmapHidden: document.getElementById("heatmap").hidden})`)
	models := filepath.Join(DistDir(), "models")
	doc := cliEval(t, "-z", filepath.Join(models, "kjv3m.tokenizer.bin"), "-text", prompt, "-tokens", "256", "-gen", "32", "-ratios", "0.2", "-methods", "snapkv", filepath.Join(models, "kjv3m.bin"))
	r := doc.Records[0]
	if got["full"] != doc.Sequences[0].Full.FreeText || got["method"] != r.FreeText {
		t.Errorf("embed's free runs:\n full   %q\n method %q\nCLI:\n full   %q\n method %q", got["full"], got["method"], doc.Sequences[0].Full.FreeText, r.FreeText)
	}
	if got["kl"] != *r.KL || got["agree"] != *r.Agree {
		t.Errorf("embed kl %v agree %v, CLI %v %v", got["kl"], got["agree"], *r.KL, *r.Agree)
	}
	if !strings.Contains(got["readout"].(string), "snapkv kl") || got["heatmapHidden"] != true {
		t.Errorf("embed readout %q, heatmap hidden %v", got["readout"], got["heatmapHidden"])
	}
	b.Screenshot("embed-says")
}

// saysMatchesCLI compares what the page shows (saysShown) with the CLI's
// document for the same model, prompt and ratio: the full cache's free run,
// every method's numbers to the last bit (n/a where the CLI says so), and
// the primary method's free run and per-position KL.
func saysMatchesCLI(t *testing.T, got saysShown, doc cliDoc) {
	t.Helper()
	s := doc.Sequences[0]
	if got.Full != s.Full.FreeText {
		t.Errorf("full cache's free run: browser %q, CLI %q", got.Full, s.Full.FreeText)
	}
	str := func(p *float64) string {
		if p == nil {
			return "NaN"
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	for _, r := range doc.Records {
		row, ok := got.Rows[r.Method]
		if !ok {
			t.Errorf("the browser shows no row for %s", r.Method)
			continue
		}
		if r.NA != "" {
			if row["kl"] != "" {
				t.Errorf("%s: the CLI says n/a (%s), the browser kl %s", r.Method, r.NA, row["kl"])
			}
			continue
		}
		want := map[string]string{"used": str(r.Used), "peak": str(r.Peak), "kl": str(r.KL), "kl_max": str(r.KLMax), "agree": str(r.Agree),
			"ppl_ratio": str(r.PPL), "needle_acc": str(r.Needle), "diverge": strconv.Itoa(*r.Diverge)}
		for k, v := range want {
			if row[k] != v {
				t.Errorf("%s %s: browser %s, CLI %s", r.Method, k, row[k], v)
			}
		}
		if r.Method == "hae-ols" {
			if got.Method != r.FreeText {
				t.Errorf("hae-ols free run: browser %q, CLI %q", got.Method, r.FreeText)
			}
			if len(got.KLs) != len(r.KLs) {
				t.Fatalf("per-position KL: browser %d values, CLI %d", len(got.KLs), len(r.KLs))
			}
			for i := range r.KLs {
				if got.KLs[i] != str(r.KLs[i]) {
					t.Errorf("KL after position %d: browser %s, CLI %s", s.Prefix+i, got.KLs[i], str(r.KLs[i]))
					break
				}
			}
		}
	}
}

// runPrompt types prompt into the page's prompt box, presses Enter and
// waits until What the model says shows the run of it.
func runPrompt(b *Browser, prompt string) {
	MustEval[bool](b, fmt.Sprintf(`(() => { const p = document.getElementById("prompt"); p.value = %q;
		p.dispatchEvent(new Event("input", {bubbles: true}));
		p.dispatchEvent(new KeyboardEvent("keydown", {key: "Enter", bubbles: true})); return true })()`, prompt))
	b.WaitFor(fmt.Sprintf(`document.getElementById("says-seq").textContent.includes(%q) && %s`, prompt, saysReady), 120*time.Second, saysState)
}

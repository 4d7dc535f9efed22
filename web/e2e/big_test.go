package e2e

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/quant"
	"github.com/haeols/haeols/internal/bytemodel"
)

// TestAppBigCheckpoint (a measurement, with HAEOLS_BIG=1: it writes a
// 100 MB file and takes a minute or two) opens a model of SmolLM2-135M's
// body (dim 576, FFN 1536, 30 layers, 9 query heads sharing 3 KV heads,
// random weights) with the byte vocabulary, written as a Q8_0 GGUF file,
// in the page with a 512-token text prompt, and logs how long the page
// takes from the file's choice to What the model says, with the progress
// bar's widths seen on the way. (The byte vocabulary keeps the prompt
// text; SmolLM2's own 49,152-token classifier would add about a fifth to
// each position's work.)
func TestAppBigCheckpoint(t *testing.T) {
	if os.Getenv("HAEOLS_BIG") == "" {
		t.Skip("a measurement: set HAEOLS_BIG=1")
	}
	appSetup(t)
	c := model.Config{Arch: model.Llama, Dim: 576, FFN: 1536, Layers: 30, Heads: 9, KVHeads: 3, HeadDim: 64,
		Vocab: bytemodel.Vocab, Context: 2048, RMSEps: 1e-5, RopeTheta: 100000, Tied: true}
	ck, err := model.Random(c, quant.Q8_0, 135)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Tokenizer, err = bytemodel.Tokenizer(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := model.WriteGGUF(&buf, ck, model.GGUFOptions{Name: "smol-shape"}); err != nil {
		t.Fatal(err)
	}
	g := buf.Bytes()
	path := filepath.Join(t.TempDir(), "smol-shape-q8_0.gguf")
	if err := os.WriteFile(path, g, 0o644); err != nil {
		t.Fatal(err)
	}
	// 511 bytes of text: BOS and 511 byte tokens, 512 in all.
	prompt := strings.Repeat("In the beginning God created the heaven and the earth. ", 10)[:511]
	site := StartSite(t)
	b := NewBrowser(t)
	b.Navigate(site.URL + "index.html?compute=cpu&prompt=" + url.QueryEscape(prompt))
	b.WaitFor(appGridDone, 90*time.Second, "")
	start := time.Now()
	if _, err := chromedp.Run(b.Ctx, chromedp.SetUploadFiles("#file-input", []string{path})); err != nil {
		t.Fatalf("choosing the GGUF file: %v", err)
	}
	var widths []string
	deadline := start.Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		if MustEval[bool](b, saysReady) {
			break
		}
		w := MustEval[string](b, `(() => { const b = document.querySelector(".bar"); return b && !b.classList.contains("hide") && b.firstElementChild ? b.firstElementChild.style.width : "" })()`)
		if w != "" && (len(widths) == 0 || widths[len(widths)-1] != w) {
			widths = append(widths, w)
		}
		time.Sleep(250 * time.Millisecond)
	}
	if !MustEval[bool](b, saysReady) {
		t.Fatalf("no answer after 5 minutes: %s", MustEval[string](b, saysState))
	}
	took := time.Since(start)
	n := MustEval[int](b, `document.getElementById("says-seq").querySelectorAll("span").length`)
	t.Logf("%.0f MB Q8_0 GGUF, 512-token prompt: What the model says after %.1f s (%d token spans shown); progress bar widths seen: %v", float64(len(g))/1e6, took.Seconds(), n, widths)
	if len(widths) < 3 {
		t.Errorf("the progress bar showed %v: want it to move while the model runs", widths)
	}
}

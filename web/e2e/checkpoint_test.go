package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/internal/bytemodel"
)

// TestAppSaysGGUF opens the random byte model written as a GGUF file with
// its byte tokenizer (internal/bytemodel) through the file input, types a
// prompt and presses Enter, moves the ratio, and checks that the texts and
// every compared method's numbers equal `haeols eval -json` on the same
// file, to the last bit. Then it opens the same model as a Hugging Face
// folder's files picked together (F32: the same numbers), and checks that
// neither file went to the server nor into the link.
func TestAppSaysGGUF(t *testing.T) {
	appSetup(t)
	dir := t.TempDir()
	bin, _ := byteModel(t, dir)
	m, err := llama.Load(bin)
	if err != nil {
		t.Fatal(err)
	}
	g, err := bytemodel.GGUF(m, model.GGUFOptions{Name: "bytes"})
	if err != nil {
		t.Fatal(err)
	}
	ggufPath := filepath.Join(dir, "bytes.gguf")
	if err := os.WriteFile(ggufPath, g, 0o644); err != nil {
		t.Fatal(err)
	}
	hfDir := filepath.Join(dir, "bytes-hf")
	if err := bytemodel.WriteHF(hfDir, m, "F32", 0); err != nil {
		t.Fatal(err)
	}
	site := StartSite(t)
	b := NewBrowser(t)
	b.Navigate(site.URL + "index.html?methods=hae-ols,topk,snapkv,quant&method=hae-ols&compute=cpu")
	b.WaitFor(appGridDone, 90*time.Second, "")
	if _, err := chromedp.Run(b.Ctx, chromedp.SetUploadFiles("#file-input", []string{ggufPath})); err != nil {
		t.Fatalf("choosing the GGUF file: %v", err)
	}
	b.WaitFor(saysReady, 120*time.Second, saysState)
	const prompt = "The pass key is 4821. Remember it."
	runPrompt(b, prompt)
	setSlider(b, "ratio", 0.25)
	b.WaitFor(saysAllDone, 120*time.Second, saysState)
	got := MustEval[saysShown](b, saysShownJS)

	doc := cliEval(t, "-text", prompt, "-tokens", "256", "-gen", "32", "-ratios", "0.25", "-methods", "hae-ols,topk,snapkv,quant", ggufPath)
	s := doc.Sequences[0]
	if got.Seq != s.Text || !strings.HasPrefix(s.Text, prompt) {
		t.Errorf("sequence text:\n browser %q\n CLI     %q", got.Seq, s.Text)
	}
	saysMatchesCLI(t, got, doc)
	if q := appQuery(t, b); q.Get("prompt") != prompt || q.Get("sample") != "file:bytes.gguf" {
		t.Errorf("the URL does not hold the prompt and the file's name: %v", q)
	}
	appShot(t, b, "app-says-gguf")

	// The same model as a Hugging Face folder's files, picked together.
	var files []string
	for _, n := range []string{"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} {
		files = append(files, filepath.Join(hfDir, n))
	}
	if _, err := chromedp.Run(b.Ctx, chromedp.SetUploadFiles("#file-input", files)); err != nil {
		t.Fatalf("choosing the folder's files: %v", err)
	}
	b.WaitFor(`document.getElementById("sample").value === "file:Hugging Face folder/" && `+saysAllDone, 120*time.Second, saysState)
	if folder := MustEval[saysShown](b, saysShownJS); !reflect.DeepEqual(folder, got) {
		t.Errorf("the folder's run differs from the GGUF file's:\n %+v\n %+v", folder, got)
	}
	for _, p := range site.Requests() {
		if strings.Contains(p, "bytes") || strings.Contains(p, "config.json") || strings.Contains(p, "model.safetensors") {
			t.Errorf("a local file went to the server: %s", p)
		}
	}
	if q := appQuery(t, b); q.Get("sample") != "file:Hugging Face folder/" || q.Get("prompt") != prompt {
		t.Errorf("the URL after the folder: %v", q)
	}
}

// hostileCheckpoints are GGUF files and Hugging Face folders built in the
// page and dropped on the app (their files together): each must give a
// message naming the wrong or missing file while the app keeps its sample.
var hostileCheckpoints = []struct {
	name  string
	files string // JS: an array of [name, bytes]
	want  string
}{
	// A tensor count of 2^40: refused from the header.
	{"lying.gguf", `[["lying.gguf", (() => { const b = new Uint8Array(24); b.set(new TextEncoder().encode("GGUF")); b[4] = 3; b[13] = 1; return b })()]]`,
		"lying.gguf: not a valid GGUF file: 1099511627776 tensors, more than the 65536"},
	{"cut.gguf", `[["cut.gguf", new Uint8Array([71, 71, 85, 70, 3, 0, 0, 0])]]`, "cut.gguf: not a valid GGUF file: tensor count needs 8 bytes"},
	{"a GGUF file with others", `[["a.gguf", new Uint8Array(8)], ["tokenizer.json", new Uint8Array(2)]]`, "a.gguf: open a GGUF file alone"},
	{"a folder without config.json", `[["model.safetensors", st('{}', 0)], ["tokenizer.json", new TextEncoder().encode("{}")]]`,
		"config.json is missing"},
	{"a folder of shards without its index", `[["config.json", new TextEncoder().encode("{}")], ["model-00001-of-00002.safetensors", st('{}', 0)]]`,
		"model.safetensors.index.json is missing"},
	{"a config that is no model", `[["config.json", new TextEncoder().encode('{"architectures": ["BertModel"]}')], ["model.safetensors", st('{}', 0)], ["tokenizer.json", new TextEncoder().encode("{}")]]`,
		"config.json"},
	{"a missing shard", `[["config.json", new TextEncoder().encode('{"architectures": ["LlamaForCausalLM"], "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 16}')],
		["model.safetensors.index.json", new TextEncoder().encode('{"weight_map": {"model.embed_tokens.weight": "model-00001-of-00002.safetensors", "model.norm.weight": "model-00002-of-00002.safetensors"}}')],
		["model-00001-of-00002.safetensors", st('{}', 0)], ["tokenizer.json", new TextEncoder().encode("{}")]]`,
		"model-00002-of-00002.safetensors is missing"},
}

// TestAppHostileCheckpoints drops each hostile checkpoint on the app and
// checks the message and that the grid stays as it was.
func TestAppHostileCheckpoints(t *testing.T) {
	_, b := openApp(t, "")
	before := gridLabels(b)
	for _, f := range hostileCheckpoints {
		MustEval[bool](b, fmt.Sprintf(`(() => {
			%s
			const dt = new DataTransfer();
			for (const [name, bytes] of %s) dt.items.add(new File([bytes], name));
			document.getElementById("app").dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
			return true })()`, stJS, f.files))
		b.WaitFor(fmt.Sprintf(`document.getElementById("error") !== null && document.getElementById("error").textContent.includes(%q) &&
			!document.querySelector(".status .loading")`, f.want), 60*time.Second, `document.body.innerText.slice(0, 600)`)
		msg := MustEval[string](b, `document.getElementById("error").textContent`)
		t.Logf("%s: %s", f.name, strings.Join(strings.Fields(msg), " "))
		if !strings.Contains(msg, "Still showing") {
			t.Errorf("%s: message %q does not say what the app still shows", f.name, msg)
		}
		if got := gridLabels(b); strings.Join(got, " ") != strings.Join(before, " ") {
			t.Errorf("%s: the grid changed: %v, was %v", f.name, got, before)
		}
		MustEval[bool](b, `(() => { document.getElementById("error").textContent = ""; return true })()`)
	}
	b.WaitFor(`new URLSearchParams(location.search).get("sample") === "default"`, 5*time.Second, `"after the hostile files the URL is " + location.search`)
}

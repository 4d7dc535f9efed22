package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// modelPath is the real llama2.c checkpoint of the shared models folder
// (HAEOLS_MODELS overrides the folder); tests that need it skip without it.
func modelPath(t *testing.T) string {
	dir := os.Getenv("HAEOLS_MODELS")
	if dir == "" {
		dir = filepath.Join(RepoRoot(), "..", "shared", "models")
	}
	p := filepath.Join(dir, "stories260K.bin")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not found (set HAEOLS_MODELS): the in-browser capture of a real checkpoint is not tested", p)
	}
	return p
}

// TestAppOpensLlamaCheckpoint opens a real llama2.c checkpoint through the
// app's file input, as a user would: the worker runs the model in
// WebAssembly, captures its q/k/v and the app shows the model's heads
// (stories260K: 5 layers x 8 heads). The file is read locally, never sent.
func TestAppOpensLlamaCheckpoint(t *testing.T) {
	path := modelPath(t)
	site, b := openApp(t, "")
	if _, err := chromedp.Run(b.Ctx, chromedp.SetUploadFiles("#file-input", []string{path})); err != nil {
		t.Fatalf("choosing %s in the file input: %v", path, err)
	}
	b.WaitFor(`document.querySelectorAll("#grid td.cell").length === 40 && `+appGridDone, 120*time.Second, `document.body.innerText.slice(0, 800)`)
	if q := appQuery(t, b); q.Get("sample") != "file:stories260K.bin" {
		t.Errorf("URL sample = %q, want file:stories260K.bin", q.Get("sample"))
	}
	if txt := MustEval[string](b, `document.body.innerText`); !strings.Contains(txt, "stories260K") {
		t.Errorf("the page does not name the model: %.400s", txt)
	}
	for _, p := range site.Requests() {
		if strings.Contains(p, "stories260K.bin") {
			t.Errorf("the checkpoint went to the server: %s", p)
		}
	}
	appShot(t, b, "app-llama-checkpoint")
}

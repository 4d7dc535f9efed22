package e2e

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/haeols/haeols/assets"
	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/gen"
)

// embedState is window.haeolsEmbed of embed.html (see web/embed.js).
type embedState struct {
	Want  float64 `json:"want"`
	Shown *struct {
		Ratio float64  `json:"ratio"`
		Err   *float64 `json:"err"`
		NA    bool     `json:"na"`
	} `json:"shown"`
	Base *struct {
		Ratio float64  `json:"ratio"`
		Err   *float64 `json:"err"`
	} `json:"base"`
	Drawn        int      `json:"drawn"`
	DrawnRatio   float64  `json:"drawnRatio"`
	LastUpdateMs float64  `json:"lastUpdateMs"`
	Errors       []string `json:"errors"`
	Hover        *struct {
		Panel string   `json:"panel"`
		Row   int      `json:"row"`
		Col   int      `json:"col"`
		Value *float64 `json:"value"`
	} `json:"hover"`
	View *struct {
		Rows  int     `json:"rows"`
		Cols  int     `json:"cols"`
		R0    float64 `json:"r0"`
		RSpan float64 `json:"rspan"`
		C0    float64 `json:"c0"`
		CSpan float64 `json:"cspan"`
	} `json:"view"`
	Params struct {
		Ratio  float64 `json:"ratio"`
		Lambda float64 `json:"lambda"`
		Phi    float64 `json:"phi"`
		Tau    float64 `json:"tau"`
	} `json:"params"`
	Readout string `json:"readout"`
}

// The embed as seen from blog.html: its iframe's window.
const embedJS = `document.getElementById("embed").contentWindow`

// embedSettled is true once the embed shows the slider's ratio: the
// method's and top-k's numbers and the drawn heatmap.
const embedSettled = `(() => { const e = ` + embedJS + `.haeolsEmbed;
	return !!e && !!e.shown && !!e.base && e.shown.ratio === e.want && e.base.ratio === e.want && e.drawnRatio === e.want; })()`

func readEmbed(t *testing.T, b *Browser) embedState {
	t.Helper()
	return MustEval[embedState](b, `(() => { const w = `+embedJS+`; const e = w.haeolsEmbed;
		return Object.assign({}, e, {readout: w.document.getElementById("readout").textContent}); })()`)
}

// headErr is core's error for the default preset's layer 0, head 1 at
// the default parameters.
func headErr(t *testing.T, method string, ratio float64) float64 {
	t.Helper()
	cfg, err := gen.DefaultConfig("default")
	if err != nil {
		t.Fatal(err)
	}
	s, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := core.NewModel(s, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	met, _, err := m.Run(method, core.DefaultParams(ratio), 0, 1)
	if err != nil {
		t.Fatalf("core %s at %g: %v", method, ratio, err)
	}
	return met.Err
}

// rect is an element's box in the top page's CSS pixels.
type rect struct{ X, Y, W, H float64 }

// heatmapRect is the heatmap iframe (inside the embed iframe) in blog.html's
// coordinates.
func heatmapRect(t *testing.T, b *Browser) rect {
	t.Helper()
	return MustEval[rect](b, `(() => { const o = document.getElementById("embed").getBoundingClientRect();
		const i = `+embedJS+`.document.getElementById("heatmap").getBoundingClientRect();
		return {X: o.left + i.left, Y: o.top + i.top, W: i.width, H: i.height}; })()`)
}

// viridisShare is the share of the pixels of r in the screenshot that are
// (within rounding) colours of the viridis colormap, excluding the dark
// floor colour and greys.
func viridisShare(t *testing.T, shot []byte, r rect, dpr float64) float64 {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	cm, err := assets.Colormap("viridis")
	if err != nil {
		t.Fatal(err)
	}
	type rgb struct{ r, g, b int }
	var lut []rgb
	for i := 8; i < 256; i++ { // skip the floor end: it looks like dark text
		c := cm.At(float64(i) / 255)
		lut = append(lut, rgb{int(c.R), int(c.G), int(c.B)})
	}
	b := img.Bounds()
	n, hit := 0, 0
	for y := int(r.Y * dpr); y < int((r.Y+r.H)*dpr) && y < b.Max.Y; y += 2 {
		for x := int(r.X * dpr); x < int((r.X+r.W)*dpr) && x < b.Max.X; x += 2 {
			R, G, B, _ := img.At(x, y).RGBA()
			p := rgb{int(R >> 8), int(G >> 8), int(B >> 8)}
			n++
			for _, c := range lut {
				if abs(p.r-c.r)+abs(p.g-c.g)+abs(p.b-c.b) <= 6 {
					hit++
					break
				}
			}
		}
	}
	if n == 0 {
		t.Fatalf("heatmap rect %+v is outside the screenshot %v", r, b)
	}
	return float64(hit) / float64(n)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// saveCopy copies a screenshot to /tmp/haeols-web for the report.
func saveCopy(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(os.TempDir(), "haeols-web")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		os.WriteFile(filepath.Join(dir, filepath.Base(path)), data, 0o644)
	}
}

// TestEmbedInBlogPage opens a plain HTML page with the embed in an iframe
// (testdata/blog.html): the embed loads the default preset in its own
// worker, draws layer 0 head 1 with the ebiten renderer, shows HAE-OLS's
// and top-k's error at ratio 0.3 (equal to core's), follows the keyboard on
// its slider, reports hovers, and asks for nothing but the site's files.
func TestEmbedInBlogPage(t *testing.T) {
	site := StartSite(t)
	b := NewBrowser(t)
	b.Navigate(site.URL + "blog.html")
	b.WaitFor(embedSettled, 90*time.Second, embedJS+`.haeolsEmbed`)
	first := readEmbed(t, b)
	if len(first.Errors) > 0 {
		t.Fatalf("embed errors: %v", first.Errors)
	}
	if first.Want != 0.3 || first.Shown.Err == nil || first.Base.Err == nil {
		t.Fatalf("embed at ratio 0.3: %+v", first)
	}
	// The embed's defaults are the core's.
	if p := first.Params; p.Lambda != core.DefaultLambda || p.Phi != core.DefaultPhi || p.Tau != core.DefaultTau {
		t.Errorf("embed.js default lambda %g, phi %g, tau %g; core's are %g, %g, %g",
			p.Lambda, p.Phi, p.Tau, core.DefaultLambda, core.DefaultPhi, core.DefaultTau)
	}
	for _, c := range []struct {
		method string
		got    float64
	}{{"hae-ols", *first.Shown.Err}, {"topk", *first.Base.Err}} {
		if want := headErr(t, c.method, 0.3); math.Abs(c.got-want) > 1e-9*math.Max(1, want) {
			t.Errorf("%s err in the embed %.12g, core says %.12g", c.method, c.got, want)
		}
		if !strings.Contains(first.Readout, fmt.Sprintf("%.4f", c.got)) {
			t.Errorf("readout %q does not show %s's err %.4f", first.Readout, c.method, c.got)
		}
	}

	// The heatmap is drawn: viridis colours fill much of its iframe.
	time.Sleep(300 * time.Millisecond) // one more frame on screen
	shot := b.Screenshot("embed-blog")
	dpr := MustEval[float64](b, `window.devicePixelRatio`)
	if share := viridisShare(t, mustRead(t, shot), heatmapRect(t, b), dpr); share < 0.2 {
		t.Errorf("only %.0f%% of the heatmap iframe shows viridis colours: not drawn?", 100*share)
	} else {
		t.Logf("viridis pixels: %.0f%% of the heatmap iframe", 100*share)
	}
	saveCopy(t, shot)

	// Keyboard: ten steps left on the slider is ratio 0.2.
	MustEval[bool](b, `(() => { document.getElementById("embed").focus();
		const s = `+embedJS+`.document.getElementById("ratio"); s.focus(); return true; })()`)
	for range 10 {
		if err := chromedp.Do(b.Ctx, chromedp.KeyEvent(kb.ArrowLeft)); err != nil {
			t.Fatal(err)
		}
	}
	b.WaitFor(`Math.abs(`+embedJS+`.haeolsEmbed.want - 0.2) < 1e-9`, 5*time.Second, embedJS+`.haeolsEmbed.want`)
	b.WaitFor(embedSettled, 30*time.Second, embedJS+`.haeolsEmbed`)
	second := readEmbed(t, b)
	if second.Readout == first.Readout {
		t.Errorf("readout did not change with the slider: %q", second.Readout)
	}
	if want := headErr(t, "hae-ols", second.Want); math.Abs(*second.Shown.Err-want) > 1e-9*math.Max(1, want) {
		t.Errorf("hae-ols err at %g in the embed %.12g, core says %.12g", second.Want, *second.Shown.Err, want)
	}
	if second.Drawn < 2 {
		t.Errorf("the heatmap drew %d messages, want a new one after the slider moved", second.Drawn)
	}
	t.Logf("ratio %g: %q; ratio %g: %q; slider to answer %.1f ms", first.Want, first.Readout, second.Want, second.Readout, second.LastUpdateMs)

	// Hover: the renderer reports the cell under the cursor.
	r := heatmapRect(t, b)
	x, y := r.X+r.W*0.45, r.Y+r.H*0.2
	if err := chromedp.Do(b.Ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y)); err != nil {
		t.Fatal(err)
	}
	b.WaitFor(embedJS+`.haeolsEmbed.hover && `+embedJS+`.haeolsEmbed.hover.row >= 0`, 10*time.Second, embedJS+`.haeolsEmbed.hover`)
	h := readEmbed(t, b).Hover
	if h.Panel == "" || h.Col < 0 || h.Value == nil {
		t.Errorf("hover readout %+v, want a panel, a column and a value", h)
	}
	time.Sleep(300 * time.Millisecond)
	saveCopy(t, b.Screenshot("embed-blog-hover"))

	// Wheel zooms about the cursor, drag pans, a double click resets.
	wheel := func(dy float64) chromedp.MouseOption {
		return func(p *input.DispatchMouseEventParams) { p.DeltaX, p.DeltaY = 1e-3, dy } // DeltaX 0 would be omitted
	}
	for range 12 {
		if err := chromedp.Do(b.Ctx, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseWheel, x, y, wheel(-120))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(40 * time.Millisecond)
	}
	const view = embedJS + `.haeolsEmbed.view`
	b.WaitFor(view+` && `+view+`.cspan < `+view+`.cols / 8`, 10*time.Second, view)
	zoomed := readEmbed(t, b).View
	// The key under the cursor stays under it (0.45 of the panel width,
	// up to the few pixels between the iframe's edge and the map).
	if under := zoomed.C0 + 0.45*zoomed.CSpan; math.Abs(under-float64(h.Col)) > 0.05*float64(zoomed.Cols) {
		t.Errorf("zoomed view %+v: column %.0f under the cursor, hovered %d before", zoomed, under, h.Col)
	}
	time.Sleep(300 * time.Millisecond)
	saveCopy(t, b.Screenshot("embed-blog-zoom"))
	drag := []chromedp.Action[chromedp.Void]{
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x, y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
	}
	for i := 1; i <= 5; i++ {
		drag = append(drag, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x-float64(30*i), y, chromedp.ButtonLeft))
	}
	drag = append(drag, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x-150, y, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	for _, a := range drag {
		if err := chromedp.Do(b.Ctx, a); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.WaitFor(view+`.c0 > `+fmt.Sprint(zoomed.C0+1), 5*time.Second, view)
	// Double-click shows the whole map. Under heavy machine load the
	// renderer can miss the pair's timing, so a missed double-click is
	// retried (up to three times) before the test fails.
	reset := view + `.cspan === ` + view + `.cols && ` + view + `.rspan === ` + view + `.rows`
	for try := 0; ; try++ {
		if err := chromedp.Do(b.Ctx, chromedp.MouseClickXY(x, y, chromedp.ClickCount(1))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(60 * time.Millisecond)
		if err := chromedp.Do(b.Ctx, chromedp.MouseClickXY(x, y, chromedp.ClickCount(2))); err != nil {
			t.Fatal(err)
		}
		if pollTrue(b, reset, 3*time.Second) {
			break
		}
		if try == 2 {
			b.WaitFor(reset, time.Second, view)
		}
	}
	// Keyboard on the focused canvas: "+" zooms, "0" shows everything.
	MustEval[bool](b, `(() => { const f = `+embedJS+`.document.getElementById("heatmap");
		f.focus(); const c = f.contentDocument.querySelector("canvas"); c.focus(); return f.contentDocument.activeElement === c; })()`)
	// "=" zooms in; presses missed within one frame are retried.
	for try := 0; ; try++ {
		pressCanvasKey(t, b, "=", "Equal")
		if pollTrue(b, view+`.cspan < `+view+`.cols * 0.8`, time.Second) {
			break
		}
		if try == 7 {
			b.WaitFor(view+`.cspan < `+view+`.cols * 0.8`, time.Second, view)
		}
	}
	// ebiten polls keys once per frame: a key pressed and released within
	// one frame under heavy load can be missed, so "0" is retried.
	for try := 0; ; try++ {
		pressCanvasKey(t, b, "0", "Digit0")
		if pollTrue(b, view+`.cspan === `+view+`.cols`, 2*time.Second) {
			break
		}
		if try == 4 {
			b.WaitFor(view+`.cspan === `+view+`.cols`, time.Second, view)
		}
	}

	// Nothing but the site's own files was asked for.
	allowed := []string{"/blog.html", "/embed.html", "/embed.js", "/heatmap.html", "/heatmap.wasm",
		"/wasm_exec.js", "/worker.js", "/app.wasm", "/favicon.ico"}
	for _, p := range site.Requests() {
		if !slices.Contains(allowed, p) {
			t.Errorf("unexpected request %s", p)
		}
	}
	for _, l := range b.Console() {
		if strings.HasPrefix(l, "error") {
			t.Errorf("console: %s", l)
		}
	}
}

// TestEmbedNarrow shows the embed alone at a phone's width and device
// scale factor 2: the controls wrap, the panels stack, and the heatmap
// canvas has two device pixels per CSS pixel (screenshot embed-narrow).
func TestEmbedNarrow(t *testing.T) {
	site := StartSite(t)
	b := NewBrowser(t)
	if err := chromedp.Do(b.Ctx, chromedp.EmulateViewport(380, 560, chromedp.EmulateScale(2))); err != nil {
		t.Fatal(err)
	}
	b.Navigate(site.URL + "embed.html?sample=default&layer=1&head=2&ratio=0.15&panel=all")
	const settled = `(() => { const e = window.haeolsEmbed; return !!e && !!e.shown && !!e.base &&
		e.shown.ratio === e.want && e.base.ratio === e.want && e.drawnRatio === e.want; })()`
	b.WaitFor(settled, 90*time.Second, `window.haeolsEmbed`)
	if errs := MustEval[[]string](b, `window.haeolsEmbed.errors`); len(errs) > 0 {
		t.Fatalf("embed errors: %v", errs)
	}
	// Nothing overflows horizontally.
	if w := MustEval[float64](b, `document.documentElement.scrollWidth`); w > 380 {
		t.Errorf("page is %g px wide in a 380 px viewport", w)
	}
	// Sharp on a high-density screen: the canvas is drawn at device pixels.
	size := MustEval[[]float64](b, `(() => { const c = document.getElementById("heatmap").contentDocument.querySelector("canvas");
		return [c.width, c.height, c.clientWidth, c.clientHeight]; })()`)
	if math.Abs(size[0]-2*size[2]) > 2 || math.Abs(size[1]-2*size[3]) > 2 {
		t.Errorf("heatmap canvas %gx%g for %gx%g CSS pixels, want twice that", size[0], size[1], size[2], size[3])
	}
	time.Sleep(300 * time.Millisecond)
	saveCopy(t, b.Screenshot("embed-narrow"))
}

// TestEmbedBadParams: a wrong query parameter is named and replaced by its
// default; the embed still works.
func TestEmbedBadParams(t *testing.T) {
	site := StartSite(t)
	b := NewBrowser(t)
	b.Navigate(site.URL + "embed.html?ratio=7&sample=../../etc&head=x")
	b.WaitFor(`window.haeolsEmbed && window.haeolsEmbed.shown && window.haeolsEmbed.shown.ratio === 0.3`, 90*time.Second, `window.haeolsEmbed`)
	status := MustEval[string](b, `document.getElementById("status").textContent`)
	for _, want := range []string{"ratio=7", "sample=../../etc", "head=x"} {
		if !strings.Contains(status, want) {
			t.Errorf("status %q does not name %s", status, want)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// pollTrue reports whether the JavaScript expression becomes true within d.
func pollTrue(b *Browser, expr string, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if ok, err := Eval[bool](b, expr); err == nil && ok {
			return true
		}
	}
	return false
}

// pressCanvasKey presses and, 150 ms later, releases a key on the heatmap's
// canvas inside the embed: ebiten listens on the canvas and reads the key
// state once per frame, so a key held across frames is never missed (a
// chromedp key event to the focused frame sometimes was, under load).
func pressCanvasKey(t *testing.T, b *Browser, key, code string) {
	t.Helper()
	js := fmt.Sprintf(`(async () => {
		const w = %s.document.getElementById("heatmap").contentWindow;
		const c = w.document.querySelector("canvas");
		const opts = {key: %q, code: %q, bubbles: true, cancelable: true};
		c.dispatchEvent(new w.KeyboardEvent("keydown", opts));
		await new Promise(r => setTimeout(r, 150));
		c.dispatchEvent(new w.KeyboardEvent("keyup", opts));
		return true })()`, embedJS, key, code)
	if _, err := Eval[bool](b, js); err != nil {
		t.Fatalf("key %s on the heatmap canvas: %v", key, err)
	}
}

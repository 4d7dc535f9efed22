package ui

import (
	"fmt"
	"math"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/js"

	"github.com/haeols/haeols/ui/state"
	"github.com/haeols/haeols/wire"
)

// MaxFileBytes bounds a local file the app will read (the worker has its
// own, equal limit).
const MaxFileBytes = 1 << 30

// openFileValue is the sample picker's "open file…" entry.
const openFileValue = "__open__"

// sampleOption is one entry of the sample picker.
type sampleOption struct {
	Value, Label, Title string
}

// PresetOptions are the generator presets (made in the browser).
func (c *Root) PresetOptions() []sampleOption {
	var out []sampleOption
	for _, p := range c.presets {
		out = append(out, sampleOption{Value: p.Name, Label: p.Name, Title: p.Description})
	}
	return out
}

// FileOptions are the shipped sample files, and the view's sample when it
// is another file of the site (a link to samples/NAME): the picker shows
// the sample that is open.
func (c *Root) FileOptions() []sampleOption {
	files := ShippedSamples
	if kind, _ := state.SampleKind(c.S.Sample); kind == "url" && !slices.Contains(files, c.S.Sample) {
		files = append(slices.Clip(files), c.S.Sample)
	}
	var out []sampleOption
	for _, f := range files {
		out = append(out, sampleOption{Value: f, Label: path.Base(f), Title: "served with the app"})
	}
	return out
}

// LocalOptions are the local files opened in this session.
func (c *Root) LocalOptions() []sampleOption {
	var out []sampleOption
	for _, f := range c.localFiles {
		whose := " (your file)"
		if strings.HasSuffix(f, "/") {
			whose = " (your files)"
		}
		out = append(out, sampleOption{Value: f, Label: strings.TrimPrefix(f, state.FilePrefix) + whose, Title: "read on your computer, never uploaded; a link cannot reopen it"})
	}
	return out
}

// OnSample switches the sample (or opens the file dialog).
func (c *Root) OnSample(e vugu.DOMEvent) {
	v := e.PropString("target", "value")
	if v == openFileValue {
		c.OpenDialog()
		// Put the picker back on the current sample.
		e.JSEventTarget().Set("value", c.S.Sample)
		return
	}
	if v == c.S.Sample || c.b == nil {
		return
	}
	if strings.HasPrefix(v, state.FilePrefix) {
		c.ErrMsg = "Open " + strings.TrimPrefix(v, state.FilePrefix) + " again with “open file…”: the app does not keep your files."
		e.JSEventTarget().Set("value", c.S.Sample)
		return
	}
	next := c.S
	next.Sample = v
	cur := c.S
	c.S = next
	src := c.source()
	c.S = cur
	if src == nil {
		c.ErrMsg = fmt.Sprintf("%q is not a sample this app can open", v)
		return
	}
	c.ErrMsg = ""
	c.load(src, js.Undefined(), v)
	c.syncURL()
}

// OpenDialog opens the browser's file dialog.
func (c *Root) OpenDialog() {
	in := js.Global().Get("document").Call("getElementById", "file-input")
	if in.Truthy() {
		in.Call("click")
	}
}

// OnFileInput reads the file chosen in the dialog.
func (c *Root) OnFileInput(e vugu.DOMEvent) {
	t := e.JSEventTarget()
	c.readFiles(t.Get("files"))
	t.Set("value", "")
}

// OnDragOver accepts files dragged over the page.
func (c *Root) OnDragOver(e vugu.DOMEvent) {
	e.PreventDefault()
	c.dragOver = true
}

// OnDragLeave ends the drop highlight.
func (c *Root) OnDragLeave(e vugu.DOMEvent) { c.dragOver = false }

// OnDrop reads a file dropped on the page.
func (c *Root) OnDrop(e vugu.DOMEvent) {
	e.PreventDefault()
	c.dragOver = false
	dt := e.JSEvent().Get("dataTransfer")
	if !dt.Truthy() {
		return
	}
	c.readFiles(dt.Get("files"))
}

// readFiles reads the files a person chose or dropped (pickFiles): one
// sample or checkpoint, a llama2.c checkpoint with its tokenizer, a GGUF
// file, or the files of a Hugging Face folder.
func (c *Root) readFiles(files js.Value) {
	if !files.Truthy() || files.Length() == 0 {
		return
	}
	names := make([]string, files.Length())
	dir := ""
	for i := range names {
		f := files.Index(i)
		names[i] = f.Get("name").String()
		// A folder chosen whole (webkitdirectory) names it.
		if rp := f.Get("webkitRelativePath"); dir == "" && rp.Type() == js.TypeString {
			if d := path.Dir(rp.String()); d != "." && d != "/" {
				dir = path.Base(d)
			}
		}
	}
	p, err := pickFiles(names, dir)
	if err != nil {
		c.ErrMsg = err.Error() + ". Still showing " + sampleLabel(c.S.Sample) + "."
		return
	}
	c.readPicked(files, p)
}

// pairFiles tells a llama2.c checkpoint from its tokenizer by their names:
// the indices (0 or 1) of the checkpoint and of the tokenizer, whose name
// has "tok" in it.
func pairFiles(a, b string) (model, tok int, err error) {
	isBin := func(n string) bool { return strings.ToLower(path.Ext(n)) == ".bin" }
	isTok := func(n string) bool { return strings.Contains(strings.ToLower(n), "tok") }
	switch {
	case !isBin(a) || !isBin(b):
		return 0, 0, fmt.Errorf("%s and %s: two files must be a checkpoint and its tokenizer (.bin)", a, b)
	case isTok(b) && !isTok(a):
		return 0, 1, nil
	case isTok(a) && !isTok(b):
		return 1, 0, nil
	case isTok(a) && isTok(b) && len(a) != len(b):
		// kjv3m.bin's tokenizer kjv3m.tokenizer.bin: the longer name.
		if len(a) > len(b) {
			return 1, 0, nil
		}
		return 0, 1, nil
	}
	return 0, 0, fmt.Errorf("%s and %s: cannot tell the checkpoint from the tokenizer (the tokenizer's name has “tok” in it)", a, b)
}

// fileSource says how the worker reads a local file, by its name.
func fileSource(name string) (*wire.Source, error) {
	switch strings.ToLower(path.Ext(name)) {
	case ".safetensors", ".npz", ".npy":
		return &wire.Source{Kind: "file", Name: name}, nil
	case ".bin":
		return &wire.Source{Kind: "llama", Name: name}, nil
	case ".gguf":
		return &wire.Source{Kind: "checkpoint", Name: name, Files: []string{name}}, nil
	}
	return nil, fmt.Errorf("%s: not a sample file or checkpoint (open a .safetensors, .npz or .npy sample, a llama2.c .bin checkpoint, a .gguf file, or a Hugging Face folder's files together)", name)
}

// readPicked reads the picked local files (browser Files) and sends their
// bytes to the worker, transferred, each in its buffer. Nothing is
// uploaded. A file over MaxFileBytes, or files over it in all, are refused
// before anything is read.
func (c *Root) readPicked(files js.Value, p *picked) {
	src := p.Src
	if src.Kind == "llama" || src.Kind == "checkpoint" {
		src.Prompt = c.S.PromptRequest()
	}
	var total float64
	for _, i := range p.Read {
		f := files.Index(i)
		size := f.Get("size").Float()
		if size > MaxFileBytes {
			c.ErrMsg = fmt.Sprintf("%s: %.0f MiB is more than this app reads (%d MiB). Still showing %s.", f.Get("name").String(), size/(1<<20), MaxFileBytes>>20, sampleLabel(c.S.Sample))
			return
		}
		total += size
	}
	if len(p.Read) > 1 && total > MaxFileBytes {
		c.ErrMsg = fmt.Sprintf("%s: %.0f MiB in all is more than this app reads (%d MiB). Still showing %s.", strings.Join(p.Bufs, ", "), total/(1<<20), MaxFileBytes>>20, sampleLabel(c.S.Sample))
		return
	}
	if c.b == nil {
		return
	}
	c.ErrMsg = ""
	c.Loading = "Reading " + p.Label + "…"
	var ok, fail js.Func
	ok = js.FuncOf(func(this js.Value, args []js.Value) interface{} {
		bufs := map[string]js.Value{}
		for k, name := range p.Bufs {
			bufs[name] = args[0].Index(k)
		}
		go func() {
			c.Env.Lock()
			defer c.Env.UnlockRender()
			sample := state.FilePrefix + p.Label
			if !containsStr(c.localFiles, sample) {
				c.localFiles = append(c.localFiles, sample)
			}
			if p.Notice != "" {
				c.Notices = append(c.Notices, p.Notice)
			}
			c.loadBufs(src, bufs, sample)
			c.syncURL()
		}()
		ok.Release()
		fail.Release()
		return nil
	})
	fail = js.FuncOf(func(this js.Value, args []js.Value) interface{} {
		msg := "unknown error"
		if len(args) > 0 && args[0].Truthy() {
			msg = args[0].Call("toString").String()
		}
		go func() {
			c.Env.Lock()
			defer c.Env.UnlockRender()
			c.Loading = ""
			c.ErrMsg = fmt.Sprintf("%s: the browser could not read the files (%s). Still showing %s.", p.Label, msg, sampleLabel(c.S.Sample))
		}()
		ok.Release()
		fail.Release()
		return nil
	})
	all := js.Global().Get("Array").New()
	for _, i := range p.Read {
		all.Call("push", files.Index(i).Call("arrayBuffer"))
	}
	js.Global().Get("Promise").Call("all", all).Call("then", ok, fail)
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// BindSlider listens to a slider's 'input' events itself (a vg-js-create
// callback; vugu calls it after every render, so it binds once per
// element). vugu's own event handling would copy every property of the
// event and the input element on each move, forcing a layout, and render
// at once; this listener reads the value and renders at the next frame.
func (c *Root) BindSlider(el js.Value, name string) {
	const mark = "haeolsBound"
	if el.Get(mark).Truthy() {
		return
	}
	el.Set(mark, true)
	el.Call("addEventListener", "input", js.FuncOf(func(this js.Value, args []js.Value) interface{} {
		v := this.Get("value").String()
		// The label follows at once; the head's answer patches the page
		// (patchLive), and the whole page renders once the sliders are
		// still (renderWhenStill).
		if x, err := strconv.ParseFloat(v, 64); err == nil {
			if lab := this.Get("previousElementSibling"); lab.Truthy() {
				if b := lab.Call("querySelector", "b"); b.Truthy() {
					b.Set("textContent", Fmt2(x))
				}
			}
		}
		go func() {
			c.Env.Lock()
			c.sliderAt = now()
			// A drag runs the code the rehearsal warms up: the rest of the
			// rehearsal would only take the cores the drag needs.
			c.rehearsedHead, c.rehearsedCurve = rehearseRounds, rehearseRounds
			c.SetParam(name, v)
			c.renderWhenStill()
		}()
		return nil
	}))
}

// SetParam sets one of ratio, lambda, phi, tau from a slider's value. It
// runs on every 'input' event while dragging: the worker drops superseded
// work.
func (c *Root) SetParam(name, value string) {
	x, err := strconv.ParseFloat(value, 64)
	if err != nil || math.IsNaN(x) {
		return
	}
	sl, ok := wire.SliderOf(name)
	if !ok {
		return
	}
	p := c.S.Params()
	*sl.Of(&p) = sl.Clamp(x)
	c.S.SetParams(p)
	c.refresh()
}

// OnToggle adds a method to the comparison or removes it.
func (c *Root) OnToggle(m string) {
	c.S.Toggle(m)
	c.refresh()
}

// OnCompute switches between the CPU kernels and the GPU (WebGPU).
func (c *Root) OnCompute(e vugu.DOMEvent) {
	v := e.PropString("target", "value")
	if v == c.S.Compute || !slices.Contains(state.Computes, v) || c.b == nil {
		return
	}
	c.S.Compute = v
	c.syncURL()
	c.sendCompute()
}

// OnPrimary makes the selected method the primary one.
func (c *Root) OnPrimary(e vugu.DOMEvent) {
	m := e.PropString("target", "value")
	if m == "" {
		return
	}
	c.S.SetMethod(m)
	c.refresh()
}

// OnCell selects a head.
func (c *Root) OnCell(l, h int) {
	c.S.Layer, c.S.Head = l, h
	c.refresh()
}

// OnCellKey selects a head from the keyboard (Enter or Space on a focused
// cell).
func (c *Root) OnCellKey(e vugu.DOMEvent, l, h int) {
	switch e.PropString("key") {
	case "Enter", " ":
		e.PreventDefault()
		c.OnCell(l, h)
	}
}

// OnHover shows a cell's numbers.
func (c *Root) OnHover(i int) { c.hover = i }

// OnPanel chooses the heatmap panel.
func (c *Root) OnPanel(p string) {
	c.S.Panel = p
	c.refresh()
}

// HeatmapPage is the heatmap renderer's page, relative to the app.
const HeatmapPage = "heatmap.html"

// HostCreated makes the heatmap iframe inside its host element (the host's
// vg-js-create callback), once per host: vugu leaves the children of an element without template children
// alone. The page keeps the latest message its parent posts before it runs
// and says {type: "heatmap-ready"} when it does; its load event also marks
// it ready.
func (c *Root) HostCreated(host js.Value) {
	// vugu calls this after every render that visits the host, not only
	// when it is made: keep the iframe there is.
	if host.Call("querySelector", "iframe").Truthy() {
		return
	}
	doc := js.Global().Get("document")
	f := doc.Call("createElement", "iframe")
	f.Set("id", "heatmap-frame")
	f.Set("className", "heatmap")
	f.Set("title", "attention heatmaps of the selected head")
	var onLoad js.Func
	onLoad = js.FuncOf(func(this js.Value, args []js.Value) interface{} {
		go func() {
			c.Env.Lock()
			defer c.Env.UnlockOnly()
			c.frameReady = true
			c.flushMaps()
		}()
		return nil
	})
	f.Call("addEventListener", "load", onLoad)
	if !c.unsandboxed {
		// A sandboxed page (scripts only, an opaque origin) gets a thread
		// of its own in Chromium, so painting the maps does not hold up
		// the app's page; the two talk by postMessage only.
		f.Call("setAttribute", "sandbox", "allow-scripts")
	}
	f.Set("src", HeatmapPage)
	c.frameReady, c.frameStarted, c.mapsDirect = false, false, false
	host.Call("appendChild", f)
}

// DismissNotices hides the URL repair notices.
func (c *Root) DismissNotices() { c.Notices = nil }

// DismissError hides the error message.
func (c *Root) DismissError() { c.ErrMsg = "" }

// baseURL is the app's directory URL (no query, no file name).
func baseURL() string {
	loc := js.Global().Get("location")
	if !loc.Truthy() {
		return ""
	}
	u, err := url.Parse(loc.Get("href").String())
	if err != nil {
		return ""
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = path.Dir(u.Path + "x")
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	return u.String()
}

// Link is the shareable link of the view.
func (c *Root) Link() string { return baseURL() + "index.html?" + c.S.Encode() }

// EmbedCode is the HTML snippet that embeds the selected head.
func (c *Root) EmbedCode() string {
	return EmbedSnippet(baseURL(), c.S)
}

// EmbedSnippet is the iframe snippet of the embed page at base for s.
func EmbedSnippet(base string, s state.State) string {
	return fmt.Sprintf(`<iframe src="%sembed.html?%s" width="640" height="420" style="border:0;max-width:100%%" title="haeols: KV-cache compression of one attention head" loading="lazy"></iframe>`,
		base, strings.ReplaceAll(s.EmbedQuery(), "&", "&amp;"))
}

// CopyLink copies the view's link.
func (c *Root) CopyLink() { c.copyText(c.Link(), "Link copied.") }

// CopyEmbed copies the embed snippet.
func (c *Root) CopyEmbed() { c.copyText(c.EmbedCode(), "Embed code copied.") }

// copyText puts text on the clipboard and shows it for copying by hand
// when the browser refuses.
func (c *Root) copyText(text, done string) {
	c.share = text
	c.copyMsg = "Select and copy:"
	cb := js.Global().Get("navigator").Get("clipboard")
	if !cb.Truthy() {
		return
	}
	var ok js.Func
	ok = js.FuncOf(func(this js.Value, args []js.Value) interface{} {
		go func() {
			c.Env.Lock()
			defer c.Env.UnlockRender()
			if c.share == text {
				c.copyMsg = done
			}
		}()
		ok.Release()
		return nil
	})
	cb.Call("writeText", text).Call("then", ok)
}

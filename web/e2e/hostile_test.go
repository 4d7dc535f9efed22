package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// stJS defines st(header, n): a safetensors file of the JSON header (padded
// with spaces to a multiple of 8 bytes) and n zero bytes of data.
const stJS = `const st = (hdr, n) => {
	while (hdr.length % 8) hdr += " ";
	const h = new TextEncoder().encode(hdr);
	const b = new Uint8Array(8 + h.length + n);
	new DataView(b.buffer).setUint32(0, h.length, true);
	b.set(h, 8);
	return b;
};`

// hostileFiles are files built in the page and dropped on the app: each
// must give a message naming the file and the problem while the app keeps
// its sample. They go through the worker's readers and NewModel, the same
// code as the command line.
var hostileFiles = []struct{ name, js, want string }{
	// A header length of 2^63: refused from the first 8 bytes.
	{"lying.safetensors", `(() => { const b = new Uint8Array(64); b[7] = 0x80; return b })()`,
		"header length 9223372036854775808 exceeds the 104857600-byte limit"},
	// Invalid UTF-8 in the header.
	{"badutf8.safetensors", `(() => { const h = new TextEncoder().encode('{"__metadata__":{"model":"aXb"}}'); h[27] = 0xff;
		const b = new Uint8Array(8 + h.length); b[0] = h.length; b.set(h, 8); return b })()`,
		"not valid UTF-8"},
	// q, k and v of 1e30: the logits must overflow float32.
	{"huge.safetensors", `(() => {
		const b = st('{"k":{"dtype":"F32","shape":[1,1,16,4],"data_offsets":[0,256]},' +
			'"q":{"dtype":"F32","shape":[1,1,16,4],"data_offsets":[256,512]},"v":{"dtype":"F32","shape":[1,1,16,4],"data_offsets":[512,768]}}', 768);
		new Float32Array(b.buffer, b.length - 768).fill(1e30); return b })()`,
		"non-finite result: layer 0 head 0"},
	// N = 2^20 positions with d = 1 (6 MiB of F16): the analysis would
	// take about 1.5 GiB.
	{"long.safetensors", `(() => {
		const n = 1 << 20;
		const b = st('{"k":{"dtype":"F16","shape":[1,1,' + n + ',1],"data_offsets":[0,' + 2*n + ']},' +
			'"q":{"dtype":"F16","shape":[1,1,' + n + ',1],"data_offsets":[' + 2*n + ',' + 4*n + ']},' +
			'"v":{"dtype":"F16","shape":[1,1,' + n + ',1],"data_offsets":[' + 4*n + ',' + 6*n + ']}}', 6*n);
		new Uint16Array(b.buffer, b.length - 6*n).fill(0x3c00); return b })()`,
		"sample too large to analyse"},
}

// TestAppHostileFilesKeepApp drops each hostile file on the app and checks
// the message and that the grid and the address stay as they were.
func TestAppHostileFilesKeepApp(t *testing.T) {
	_, b := openApp(t, "")
	before := gridLabels(b)
	for _, f := range hostileFiles {
		MustEval[bool](b, fmt.Sprintf(`(() => {
			%s
			const dt = new DataTransfer();
			dt.items.add(new File([%s], %q));
			document.getElementById("app").dispatchEvent(new DragEvent("drop", {dataTransfer: dt, bubbles: true, cancelable: true}));
			return true })()`, stJS, f.js, f.name))
		b.WaitFor(fmt.Sprintf(`document.getElementById("error") !== null && document.getElementById("error").textContent.includes(%q) &&
			!document.querySelector(".status .loading")`, f.name), 60*time.Second, `document.body.innerText.slice(0, 600)`)
		msg := MustEval[string](b, `document.getElementById("error").textContent`)
		t.Logf("%s: %s", f.name, strings.Join(strings.Fields(msg), " "))
		if !strings.Contains(msg, f.want) || !strings.Contains(msg, "Still showing") {
			t.Errorf("%s: message %q, want it to say %q and what the app still shows", f.name, msg, f.want)
		}
		if got := gridLabels(b); strings.Join(got, " ") != strings.Join(before, " ") {
			t.Errorf("%s: the grid changed: %v, was %v", f.name, got, before)
		}
	}
	b.WaitFor(`new URLSearchParams(location.search).get("sample") === "default"`, 5*time.Second, `"after the hostile files the URL is " + location.search`)
	b.Screenshot("app-hostile-file")
}

// TestAppRefusesHugeFileBySize drops a file that claims 2 GiB (its size
// property; its bytes are never made): the app must refuse it by its size,
// without reading it, and keep its sample.
func TestAppRefusesHugeFileBySize(t *testing.T) {
	_, b := openApp(t, "")
	before := gridLabels(b)
	MustEval[bool](b, `(() => {
		window.hugeRead = false;
		const f = new File([new Uint8Array(16)], "huge2g.safetensors");
		Object.defineProperty(f, "size", {value: 2 * 1024 * 1024 * 1024});
		f.arrayBuffer = () => { window.hugeRead = true; return Promise.reject(new Error("read")) };
		const dt = new DataTransfer();
		dt.items.add(f);
		const ev = new DragEvent("drop", {bubbles: true, cancelable: true});
		Object.defineProperty(ev, "dataTransfer", {value: {files: [f], items: dt.items, types: ["Files"]}});
		document.getElementById("app").dispatchEvent(ev);
		return true })()`)
	b.WaitFor(`document.getElementById("error") !== null && document.getElementById("error").textContent.includes("huge2g.safetensors")`, 30*time.Second, `document.body.innerText.slice(0, 600)`)
	msg := strings.Join(strings.Fields(MustEval[string](b, `document.getElementById("error").textContent`)), " ")
	t.Logf("%s", msg)
	if !strings.Contains(msg, "huge2g.safetensors: 2048 MiB is more than this app reads (1024 MiB). Still showing") {
		t.Errorf("message %q, want the refusal by size", msg)
	}
	if MustEval[bool](b, `window.hugeRead`) {
		t.Error("the app read the file before refusing it")
	}
	if got := gridLabels(b); strings.Join(got, " ") != strings.Join(before, " ") {
		t.Errorf("the grid changed: %v, was %v", got, before)
	}
}

// Command app is the haeols web app (GOOS=js GOARCH=wasm, served as
// app.wasm). In the page (index.html) it mounts the vugu root component of
// package ui on #app-mount and runs the render loop; all computing happens
// in a Web Worker, so the page's main thread stays free. In that worker
// (web/worker.js loads the same app.wasm) it runs the core (package
// wasm/worker). One binary for both halves: the code they share (the Go
// runtime, encoding/json, the protocol, the presets) is downloaded once.
// It is built with the tag nomodel: the worker's model runner (checkpoints,
// tokenizers, decoding) is runner.wasm's (package wasm/runner), which the
// page loads when it first opens a model.
package main

import (
	"log"
	"runtime/debug"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/domrender"
	"github.com/vugu/vugu/js"

	"github.com/haeols/haeols/ui"
	"github.com/haeols/haeols/wasm/worker"
)

func main() {
	if !js.Global().Get("document").Truthy() {
		worker.Run() // in web/worker.js's Web Worker
		return
	}
	// The page's heap is small (the core runs in the worker): collect
	// less often, so that a collection rarely lands in a render.
	debug.SetGCPercent(400)
	renderer, err := domrender.New("#app-mount")
	if err != nil {
		log.Fatalf("app: mounting on #app-mount: %v", err)
	}
	defer renderer.Release()
	// index.html's haeolsQuietVugu: renders skip writing unchanged values.
	if q := js.Global().Get("haeolsQuietVugu"); q.Type() == js.TypeFunction {
		q.Invoke()
	}
	buildEnv, err := vugu.NewBuildEnv(renderer.EventEnv())
	if err != nil {
		log.Fatalf("app: %v", err)
	}
	env := renderer.EventEnv()
	root := ui.NewRoot(env, js.Global().Get("location").Get("search").String())
	perf := js.Global().Get("performance")
	for ok := true; ok; ok = renderer.EventWait() {
		t0 := perf.Call("now").Float()
		build := buildEnv.RunBuild(root)
		ui.ASCIIContent(build.Out)
		t1 := perf.Call("now").Float()
		if err := renderer.Render(build); err != nil {
			log.Fatalf("app: render: %v", err)
		}
		t2 := perf.Call("now").Float()
		ui.RecordTiming("build", t1-t0)
		ui.RecordTiming("render", t2-t1)
		// Start after the first render, so that the heatmap iframe exists.
		if !root.Started() {
			env.Lock()
			root.Start()
			env.UnlockRender()
		}
	}
}

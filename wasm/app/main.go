// Command app is the haeols web app's entry point (GOOS=js GOARCH=wasm,
// served as app.wasm by index.html): it mounts the vugu root component of
// package ui on #app-mount and runs the render loop. All computing happens
// in the Web Worker (worker.js); this program only renders and routes
// messages, so the page's main thread stays free.
package main

import (
	"log"

	"github.com/vugu/vugu"
	"github.com/vugu/vugu/domrender"
	"github.com/vugu/vugu/js"

	"github.com/haeols/haeols/ui"
)

func main() {
	renderer, err := domrender.New("#app-mount")
	if err != nil {
		log.Fatalf("app: mounting on #app-mount: %v", err)
	}
	defer renderer.Release()
	buildEnv, err := vugu.NewBuildEnv(renderer.EventEnv())
	if err != nil {
		log.Fatalf("app: %v", err)
	}
	env := renderer.EventEnv()
	root := ui.NewRoot(env, js.Global().Get("location").Get("search").String())
	for ok := true; ok; ok = renderer.EventWait() {
		if err := renderer.Render(buildEnv.RunBuild(root)); err != nil {
			log.Fatalf("app: render: %v", err)
		}
		// Start after the first render, so that the heatmap iframe exists.
		if !root.Started() {
			env.Lock()
			root.Start()
			env.UnlockRender()
		}
	}
}

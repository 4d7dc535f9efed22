//go:build js

package gpu

import (
	"syscall/js"

	"github.com/cogentcore/webgpu/jsx"
)

// precheck fails where the JavaScript host has no navigator.gpu (Node, or a
// browser without WebGPU), before the binding would dereference it.
func precheck() error {
	nav := js.Global().Get("navigator")
	if !nav.Truthy() || !nav.Get("gpu").Truthy() {
		return unavailable("this browser has no WebGPU (navigator.gpu)")
	}
	return nil
}

// browserInfo asks navigator.gpu for the adapter's description (the
// binding's Adapter.GetInfo is empty in the browser).
func browserInfo(i Info) Info {
	i.Backend = "WebGPU"
	gpu := js.Global().Get("navigator").Get("gpu")
	if !gpu.Truthy() {
		return i
	}
	a, ok := jsx.Await(gpu.Call("requestAdapter"))
	if !ok || !a.Truthy() {
		return i
	}
	info := a.Get("info")
	if !info.Truthy() {
		return i
	}
	str := func(k string) string {
		v := info.Get(k)
		if v.Type() == js.TypeString {
			return v.String()
		}
		return ""
	}
	i.Vendor = str("vendor")
	i.Name = str("description")
	if i.Name == "" {
		i.Name = i.Vendor + " " + str("architecture")
	}
	i.Driver = str("architecture")
	if fb := info.Get("isFallbackAdapter"); fb.Type() == js.TypeBoolean && fb.Bool() {
		i.Software = true
		i.Type = "CPU"
	}
	return i
}

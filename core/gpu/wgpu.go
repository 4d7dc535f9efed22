//go:build cgo || js

package gpu

import (
	"fmt"
	"strings"
	"sync"

	"github.com/cogentcore/webgpu/wgpu"

	"github.com/haeols/haeols/core/wgsl"
)

// Device is an open WebGPU device with the kernels of package wgsl
// compiled. Its methods may be called from several goroutines; they run
// one at a time.
type Device struct {
	mu       sync.Mutex
	inst     *wgpu.Instance
	adapter  *wgpu.Adapter
	dev      *wgpu.Device
	queue    *wgpu.Queue
	info     Info
	maxBind  uint64
	pipes    map[string]*pipeline // "kernel.entry"
	layouts  map[string]*wgpu.BindGroupLayout
	plLayout map[string]*wgpu.PipelineLayout
	none     *gbuf // a 4-byte buffer bound where a kernel's array is unused
}

type pipeline struct {
	kernel wgsl.Kernel
	layout *wgpu.BindGroupLayout
	p      *wgpu.ComputePipeline
}

// gbuf is a storage buffer of float32 (or uint32) elements.
type gbuf struct {
	b    *wgpu.Buffer
	size uint64 // bytes
}

func init() { wgpu.SetLogLevel(wgpu.LogLevelOff) }

// Open requests an adapter and a device and compiles every kernel. It
// returns an error wrapping ErrUnavailable when there is no adapter.
func Open(opt Options) (d *Device, err error) {
	// A backend is chosen by enumerating its adapters: the binding's
	// instance descriptor leaves fields of wgpu-native's instance extras
	// uninitialised (a non-nil one can abort the process), and wgpu-native
	// ignores the backend of an adapter request.
	if err := checkBackend(opt.Backend); err != nil {
		return nil, err
	}
	var backends wgpu.InstanceBackend
	switch opt.Backend {
	case "vulkan":
		backends = wgpu.InstanceBackendVulkan
	case "gl":
		backends = wgpu.InstanceBackendGL
	case "metal":
		backends = wgpu.InstanceBackendMetal
	case "dx12":
		backends = wgpu.InstanceBackendDX12
	}
	if err := precheck(); err != nil {
		return nil, err
	}
	inst := wgpu.CreateInstance(nil)
	if inst == nil {
		return nil, unavailable("this environment has no WebGPU (navigator.gpu)")
	}
	d = &Device{inst: inst, pipes: map[string]*pipeline{}, layouts: map[string]*wgpu.BindGroupLayout{}, plLayout: map[string]*wgpu.PipelineLayout{}}
	defer func() {
		if err != nil {
			d.Close()
			d = nil
		}
	}()
	if backends != 0 {
		d.adapter = pickAdapter(inst.EnumerateAdapters(&wgpu.InstanceEnumerateAdapterOptons{Backends: backends}), opt.Fallback)
		if d.adapter == nil {
			return nil, unavailable("the system offers no %s adapter", opt.Backend)
		}
	} else {
		pref := wgpu.PowerPreferenceHighPerformance
		if opt.LowPower {
			pref = wgpu.PowerPreferenceLowPower
		}
		d.adapter, err = inst.RequestAdapter(&wgpu.RequestAdapterOptions{PowerPreference: pref, ForceFallbackAdapter: opt.Fallback})
		if err != nil || d.adapter == nil {
			return nil, unavailable("the system offers no WebGPU adapter")
		}
	}
	d.info = adapterInfo(d.adapter)
	if opt.HardwareOnly && d.info.Software {
		return nil, fmt.Errorf("%w (%s)", ErrSoftware, d.info.Name)
	}
	// The WebGPU defaults, with the adapter's largest buffers: the
	// calibration matrices of long contexts are big.
	al := d.adapter.GetLimits().Limits
	lim := wgpu.DefaultLimits()
	lim.MaxStorageBufferBindingSize = max(lim.MaxStorageBufferBindingSize, al.MaxStorageBufferBindingSize)
	lim.MaxBufferSize = max(lim.MaxBufferSize, al.MaxBufferSize)
	d.dev, err = d.adapter.RequestDevice(&wgpu.DeviceDescriptor{Label: "haeols", RequiredLimits: &wgpu.RequiredLimits{Limits: lim}})
	if err != nil {
		return nil, unavailable("requesting a device: %v", err)
	}
	d.queue = d.dev.GetQueue()
	dl := d.dev.GetLimits().Limits
	d.maxBind = min(dl.MaxStorageBufferBindingSize, dl.MaxBufferSize)
	if d.maxBind == 0 { // a backend that reports no limits: the WebGPU defaults
		d.maxBind = 128 << 20
	}
	d.info.MaxBinding = d.maxBind
	for _, k := range wgsl.Kernels {
		if err := d.compile(k); err != nil {
			return nil, err
		}
	}
	if d.none, err = d.alloc(1); err != nil {
		return nil, err
	}
	if err = d.selfTest(); err != nil {
		return nil, fmt.Errorf("%w on %s", err, d.info)
	}
	return d, nil
}

// pickAdapter keeps the first hardware adapter of as (the first software
// one when fallback is set, or when there is no other) and releases the
// rest.
func pickAdapter(as []*wgpu.Adapter, fallback bool) *wgpu.Adapter {
	var pick *wgpu.Adapter
	for _, a := range as {
		if pick == nil || (adapterInfo(pick).Software != fallback && adapterInfo(a).Software == fallback) {
			pick = a
		}
	}
	for _, a := range as {
		if a != pick {
			a.Release()
		}
	}
	return pick
}

// adapterInfo describes a (native) adapter; the browser's is filled in by
// browserInfo.
func adapterInfo(a *wgpu.Adapter) Info {
	ai := a.GetInfo()
	info := Info{Name: ai.Name, Driver: ai.DriverDescription, Vendor: ai.VendorName}
	if (info.Name == "" || strings.HasPrefix(info.Name, "0x")) && info.Driver != "" {
		info.Name = info.Driver // Mesa's software adapters name themselves here
	}
	if info.Vendor == "" && ai.VendorId != 0 {
		info.Vendor = fmt.Sprintf("0x%04x", ai.VendorId)
	}
	if ai.Name != "" || ai.BackendType != 0 {
		info.Backend = ai.BackendType.String()
		info.Type = ai.AdapterType.String()
		info.Software = ai.AdapterType == wgpu.AdapterTypeCPU
	}
	if info.Name == "" {
		info = browserInfo(info)
	}
	lower := strings.ToLower(info.Name + " " + info.Driver)
	for _, sw := range []string{"llvmpipe", "swiftshader", "lavapipe", "warp", "software"} {
		if strings.Contains(lower, sw) {
			info.Software = true
		}
	}
	return info
}

// compile builds the pipelines of kernel k with an explicit bind group
// layout (the browser backend cannot derive one from a pipeline).
func (d *Device) compile(k wgsl.Kernel) error {
	src, err := wgsl.Source(k.Name)
	if err != nil {
		return err
	}
	mod, err := d.dev.CreateShaderModule(&wgpu.ShaderModuleDescriptor{Label: k.Name + ".wgsl", WGSLDescriptor: &wgpu.ShaderModuleWGSLDescriptor{Code: src}})
	if err != nil {
		return fmt.Errorf("gpu: compiling %s.wgsl: %w", k.Name, err)
	}
	defer mod.Release() // the pipelines keep what they need
	entries := []wgpu.BindGroupLayoutEntry{{Binding: 0, Visibility: wgpu.ShaderStageCompute, Buffer: wgpu.BufferBindingLayout{Type: wgpu.BufferBindingTypeUniform}}}
	for i := 0; i < k.Inputs+k.Writes; i++ {
		t := wgpu.BufferBindingTypeReadOnlyStorage
		if i >= k.Inputs {
			t = wgpu.BufferBindingTypeStorage
		}
		entries = append(entries, wgpu.BindGroupLayoutEntry{Binding: uint32(i + 1), Visibility: wgpu.ShaderStageCompute, Buffer: wgpu.BufferBindingLayout{Type: t}})
	}
	bgl, err := d.dev.CreateBindGroupLayout(&wgpu.BindGroupLayoutDescriptor{Label: k.Name, Entries: entries})
	if err != nil {
		return fmt.Errorf("gpu: bind group layout of %s: %w", k.Name, err)
	}
	pl, err := d.dev.CreatePipelineLayout(&wgpu.PipelineLayoutDescriptor{Label: k.Name, BindGroupLayouts: []*wgpu.BindGroupLayout{bgl}})
	if err != nil {
		return fmt.Errorf("gpu: pipeline layout of %s: %w", k.Name, err)
	}
	d.layouts[k.Name], d.plLayout[k.Name] = bgl, pl
	for _, e := range k.Entries {
		p, err := d.dev.CreateComputePipeline(&wgpu.ComputePipelineDescriptor{Layout: pl, Compute: wgpu.ProgrammableStageDescriptor{Module: mod, EntryPoint: e}})
		if err != nil {
			return fmt.Errorf("gpu: pipeline %s.%s: %w", k.Name, e, err)
		}
		d.pipes[k.Name+"."+e] = &pipeline{kernel: k, layout: bgl, p: p}
	}
	return nil
}

// Info describes the adapter.
func (d *Device) Info() Info { return d.info }

// Close releases the device. A closed Device must not be used.
func (d *Device) Close() {
	if d == nil {
		return
	}
	d.free(d.none)
	for _, p := range d.pipes {
		p.p.Release()
	}
	for _, l := range d.plLayout {
		l.Release()
	}
	for _, l := range d.layouts {
		l.Release()
	}
	if d.queue != nil {
		d.queue.Release()
	}
	if d.dev != nil {
		d.dev.Release()
	}
	if d.adapter != nil {
		d.adapter.Release()
	}
	if d.inst != nil {
		d.inst.Release()
	}
	*d = Device{}
}

const storageUsage = wgpu.BufferUsageStorage | wgpu.BufferUsageCopySrc | wgpu.BufferUsageCopyDst

// upload makes a storage buffer holding data (at least minBytes, and never
// empty: WebGPU does not bind empty buffers).
func (d *Device) upload(data []byte, minBytes int) (*gbuf, error) {
	n := max(len(data), minBytes, 4)
	n = (n + 3) &^ 3
	if uint64(n) > d.maxBind {
		return nil, fmt.Errorf("gpu: buffer of %d bytes exceeds the device's binding limit of %d bytes", n, d.maxBind)
	}
	if len(data) < n {
		data = append(data[:len(data):len(data)], make([]byte, n-len(data))...)
	}
	b, err := d.dev.CreateBufferInit(&wgpu.BufferInitDescriptor{Label: "haeols", Contents: data, Usage: storageUsage})
	if err != nil {
		return nil, fmt.Errorf("gpu: creating a buffer of %d bytes: %w", n, err)
	}
	return &gbuf{b: b, size: uint64(n)}, nil
}

// alloc makes a zeroed storage buffer of n float32 elements.
func (d *Device) alloc(n int) (*gbuf, error) {
	size := uint64(max(n, 1)) * 4
	if size > d.maxBind {
		return nil, fmt.Errorf("gpu: buffer of %d bytes exceeds the device's binding limit of %d bytes", size, d.maxBind)
	}
	b, err := d.dev.CreateBuffer(&wgpu.BufferDescriptor{Label: "haeols", Size: size, Usage: storageUsage})
	if err != nil {
		return nil, fmt.Errorf("gpu: creating a buffer of %d bytes: %w", size, err)
	}
	return &gbuf{b: b, size: size}, nil
}

// free releases buffers (nil ones are skipped).
func (d *Device) free(bs ...*gbuf) {
	for _, b := range bs {
		if b != nil && b.b != nil {
			b.b.Destroy()
			b.b.Release()
			b.b = nil
		}
	}
}

// run dispatches one entry point of a kernel with the uniform block params
// and the storage buffers bufs (bindings 1, 2, ...), as groups workgroups.
// The work is queued; download waits for it.
func (d *Device) run(kernel, entry string, params []byte, groups [3]uint32, bufs ...*gbuf) error {
	p := d.pipes[kernel+"."+entry]
	if p == nil {
		return fmt.Errorf("gpu: no kernel %s.%s", kernel, entry)
	}
	if len(bufs) != p.kernel.Inputs+p.kernel.Writes {
		return fmt.Errorf("gpu: %s.%s takes %d buffers, got %d", kernel, entry, p.kernel.Inputs+p.kernel.Writes, len(bufs))
	}
	if len(params) < p.kernel.Uniform {
		params = append(params, make([]byte, p.kernel.Uniform-len(params))...)
	}
	ub, err := d.dev.CreateBufferInit(&wgpu.BufferInitDescriptor{Label: kernel + " params", Contents: params, Usage: wgpu.BufferUsageUniform | wgpu.BufferUsageCopyDst})
	if err != nil {
		return fmt.Errorf("gpu: %s params: %w", kernel, err)
	}
	defer ub.Release()
	entries := []wgpu.BindGroupEntry{{Binding: 0, Buffer: ub, Size: wgpu.WholeSize}}
	for i, b := range bufs {
		entries = append(entries, wgpu.BindGroupEntry{Binding: uint32(i + 1), Buffer: b.b, Size: b.size})
	}
	bg, err := d.dev.CreateBindGroup(&wgpu.BindGroupDescriptor{Label: kernel, Layout: p.layout, Entries: entries})
	if err != nil {
		return fmt.Errorf("gpu: binding the buffers of %s: %w", kernel, err)
	}
	defer bg.Release()
	enc, err := d.dev.CreateCommandEncoder(nil)
	if err != nil {
		return fmt.Errorf("gpu: %s: %w", kernel, err)
	}
	defer enc.Release()
	pass := enc.BeginComputePass(nil)
	pass.SetPipeline(p.p)
	pass.SetBindGroup(0, bg, nil)
	pass.DispatchWorkgroups(groups[0], groups[1], groups[2])
	pass.End()
	pass.Release()
	cmd, err := enc.Finish(nil)
	if err != nil {
		return fmt.Errorf("gpu: recording %s: %w", kernel, err)
	}
	defer cmd.Release()
	d.queue.Submit(cmd)
	return nil
}

// download waits for the queued work and copies the first len(dst)
// elements of b into dst.
func (d *Device) download(dst []float32, b *gbuf) error {
	size := uint64(len(dst)) * 4
	if size == 0 {
		return nil
	}
	if size > b.size {
		return fmt.Errorf("gpu: reading %d bytes from a buffer of %d", size, b.size)
	}
	st, err := d.dev.CreateBuffer(&wgpu.BufferDescriptor{Label: "readback", Size: size, Usage: wgpu.BufferUsageMapRead | wgpu.BufferUsageCopyDst})
	if err != nil {
		return fmt.Errorf("gpu: readback buffer: %w", err)
	}
	defer st.Release()
	enc, err := d.dev.CreateCommandEncoder(nil)
	if err != nil {
		return fmt.Errorf("gpu: readback: %w", err)
	}
	defer enc.Release()
	enc.CopyBufferToBuffer(b.b, 0, st, 0, size)
	cmd, err := enc.Finish(nil)
	if err != nil {
		return fmt.Errorf("gpu: readback: %w", err)
	}
	defer cmd.Release()
	d.queue.Submit(cmd)
	called, status := false, wgpu.BufferMapAsyncStatusUnknown
	if err := st.MapAsync(wgpu.MapModeRead, 0, size, func(s wgpu.BufferMapAsyncStatus) { called, status = true, s }); err != nil {
		return fmt.Errorf("gpu: mapping the readback buffer: %w", err)
	}
	d.dev.Poll(true, nil)
	if !called || status != wgpu.BufferMapAsyncStatusSuccess {
		return fmt.Errorf("gpu: mapping the readback buffer failed (status %d)", status)
	}
	copy(dst, wgpu.FromBytes[float32](st.GetMappedRange(0, uint(size))))
	st.Unmap()
	return nil
}

func (d *Device) lock()   { d.mu.Lock() }
func (d *Device) unlock() { d.mu.Unlock() }

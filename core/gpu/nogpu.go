//go:build !cgo && !js

package gpu

// Device is a GPU device. In a build without cgo there is none: Open
// always fails, so the methods below are never reached.
type Device struct {
	none    *gbuf
	maxBind uint64
	info    Info
}

type gbuf struct{}

// Open returns ErrUnavailable: this binary was built without cgo, which the
// native WebGPU runner needs.
func Open(opt Options) (*Device, error) {
	if err := checkBackend(opt.Backend); err != nil {
		return nil, err
	}
	return nil, unavailable("built without cgo (CGO_ENABLED=0); the native GPU runner needs cgo")
}

// Info describes the adapter.
func (d *Device) Info() Info { return Info{} }

// Close releases the device.
func (d *Device) Close() {}

func (d *Device) upload(_ []byte, _ int) (*gbuf, error)                 { return nil, ErrUnavailable }
func (d *Device) alloc(int) (*gbuf, error)                              { return nil, ErrUnavailable }
func (d *Device) free(...*gbuf)                                         {}
func (d *Device) download(_ []float32, _ *gbuf) error                   { return ErrUnavailable }
func (d *Device) run(string, string, []byte, [3]uint32, ...*gbuf) error { return ErrUnavailable }

func (d *Device) lock()   {}
func (d *Device) unlock() {}

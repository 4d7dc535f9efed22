package state

import (
	"slices"
	"testing"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/wire"
)

// TestDefaults: the default view's methods are the core's, and its
// parameters are valid and within their sliders.
func TestDefaults(t *testing.T) {
	d := Default()
	p := d.Params()
	for _, sl := range wire.Sliders {
		if x := *sl.Of(&p); x < sl.Min || x > sl.Max {
			t.Errorf("default %s %v is outside its slider [%v, %v]", sl.Name, x, sl.Min, sl.Max)
		}
	}
	names := core.MethodNames()
	for _, m := range append([]string{DefaultMethod}, DefaultMethods...) {
		if !slices.Contains(names, m) {
			t.Errorf("default method %q is not a core method (%v)", m, names)
		}
	}
	cp := core.DefaultParams(p.Ratio)
	cp.Lambda, cp.Phi, cp.Tau = p.Lambda, p.Phi, p.Tau
	if err := cp.Validate(); err != nil {
		t.Error(err)
	}
}

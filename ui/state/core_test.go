package state

import (
	"slices"
	"testing"

	"github.com/haeols/haeols/core"
)

// TestDefaultsMatchCore pins the defaults repeated here to the core's.
func TestDefaultsMatchCore(t *testing.T) {
	p := core.DefaultParams(DefaultRatio)
	if p.Lambda != DefaultLambda || p.Phi != DefaultPhi || p.Tau != DefaultTau {
		t.Errorf("defaults lambda/phi/tau = %v/%v/%v, core has %v/%v/%v", DefaultLambda, DefaultPhi, DefaultTau, p.Lambda, p.Phi, p.Tau)
	}
	names := core.MethodNames()
	for _, m := range append([]string{DefaultMethod}, DefaultMethods...) {
		if !slices.Contains(names, m) {
			t.Errorf("default method %q is not a core method (%v)", m, names)
		}
	}
	if err := p.Validate(); err != nil {
		t.Error(err)
	}
}

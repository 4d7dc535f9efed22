package gen

import (
	"testing"

	"github.com/haeols/haeols/internal/fmacheck"
)

// TestNoFusedMultiplyAdd: a fused multiply-add would change the generated
// samples' bits on some platforms (the hash test cannot see it, since
// neither amd64 v1 nor wasm fuses).
func TestNoFusedMultiplyAdd(t *testing.T) { fmacheck.Check(t, ".") }

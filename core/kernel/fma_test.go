package kernel

import (
	"testing"

	"github.com/haeols/haeols/internal/fmacheck"
)

// TestNoFusedMultiplyAdd: results must be the same bits on every platform
// (see package fmacheck).
func TestNoFusedMultiplyAdd(t *testing.T) { fmacheck.Check(t, ".") }

package e2e

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// TestMain fails the package when Chromium is missing (unless
// HAEOLS_SKIP_BROWSER=1) and builds web/dist with `make web` first.
func TestMain(m *testing.M) {
	if err := Setup(); err != nil {
		if errors.Is(err, errSkip) {
			fmt.Println("e2e:", err)
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

//go:build cgo && !js

package gpu

import "os"

// browserInfo is only needed in the browser, where the adapter describes
// itself through JavaScript.
func browserInfo(i Info) Info { return i }

// precheck has nothing to check natively (RequestAdapter reports a missing
// adapter); it gives Mesa's drivers the runtime directory they complain
// about on stderr when it is unset (a headless machine).
func precheck() error {
	if os.Getenv("XDG_RUNTIME_DIR") == "" {
		os.Setenv("XDG_RUNTIME_DIR", os.TempDir())
	}
	return nil
}

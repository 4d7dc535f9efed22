//go:build !linux

package main

import "os"

// peakRSS: only Linux's getrusage is read here.
func peakRSS(*os.ProcessState) (int64, bool) { return 0, false }

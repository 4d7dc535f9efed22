package main

import (
	"os"
	"syscall"
)

// peakRSS is the peak resident memory of the ended process ps, in bytes.
func peakRSS(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	return ru.Maxrss << 10, true // kilobytes on Linux
}

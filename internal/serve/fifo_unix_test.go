//go:build unix

package serve

import "syscall"

// mkfifo makes a named pipe (best effort).
func mkfifo(path string) { syscall.Mkfifo(path, 0o600) }

package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/haeols/haeols/internal/serve"
)

const serveUsage = `Usage: haeols serve [flags]

Serve the in-browser simulator (the static site built by make web) on a
local address and print it. Everything runs in the browser: the server only
hands out its own files, with the right MIME types and precompressed copies:
regular files inside -dir (no symbolic link out of it, no dotfiles), with
timeouts for slow clients. It warns when -addr is not a loopback address
(e.g. :8080 or 0.0.0.0:8080: every interface). Stop with Ctrl-C.

Example:
  make web && haeols serve -addr 127.0.0.1:8080
`

func cmdServe(e *env, args []string) error {
	fs := newFlags("serve")
	addr := fs.String("addr", serve.DefaultAddr, "address to listen on (a free port is used if it is taken)")
	dir := fs.String("dir", "web/dist", "the built site (make web)")
	if _, err := parse(e, fs, args, serveUsage, 0); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return serve.Run(ctx, *addr, *dir, e.stdout)
}

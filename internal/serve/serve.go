// Package serve is the static file server behind `haeols serve`: it serves
// the built web app (web/dist) with the right MIME types (application/wasm
// for WebAssembly) and the precompressed copy of a file when the client
// accepts its encoding: name.br with Content-Encoding: br (preferred), else
// name.gz with Content-Encoding: gzip. WebAssembly files may be fetched
// from any origin (Access-Control-Allow-Origin: *). It never lists
// directories, serves regular files only, never a dotfile or anything in a
// dot directory (such as web/dist/.built), and never anything outside its
// root: Run serves the directory through os.Root, so a symbolic link that
// leads out of it is refused like a path with "..".
//
// Headers (see pageHeaders): every answer says nosniff and no-referrer.
// The embed page (embed.html, for an iframe in anyone's blog post) and the
// heatmap page it and the app frame (heatmap.html) may be framed by any
// site; every other page only by the site itself (frame-ancestors 'self',
// X-Frame-Options SAMEORIGIN), since nothing else is meant to frame the app
// and a page that cannot be framed cannot be clickjacked.
//
// Run times out slow clients (ReadHeaderTimeout, ReadTimeout, WriteTimeout,
// IdleTimeout) so that connections that never read cannot pile up, and warns
// when it listens beyond the loopback interface.
package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultAddr is where Run listens when no address is given.
const DefaultAddr = "127.0.0.1:8080"

// mimeTypes are the types of the files the app is made of, fixed here so
// that they do not depend on the host's MIME database.
var mimeTypes = map[string]string{
	".html":        "text/html; charset=utf-8",
	".htm":         "text/html; charset=utf-8",
	".css":         "text/css; charset=utf-8",
	".js":          "text/javascript; charset=utf-8",
	".mjs":         "text/javascript; charset=utf-8",
	".json":        "application/json",
	".wasm":        "application/wasm",
	".png":         "image/png",
	".svg":         "image/svg+xml",
	".ico":         "image/x-icon",
	".txt":         "text/plain; charset=utf-8",
	".md":          "text/plain; charset=utf-8",
	".gz":          "application/gzip",
	".br":          "application/octet-stream",
	".safetensors": "application/octet-stream",
	".npz":         "application/octet-stream",
	".npy":         "application/octet-stream",
	".bin":         "application/octet-stream",
}

// ContentType returns the MIME type served for a file name.
func ContentType(name string) string {
	if t, ok := mimeTypes[strings.ToLower(path.Ext(name))]; ok {
		return t
	}
	return "application/octet-stream"
}

// Handler serves the files of root. "/" and directories serve their
// index.html; a directory without one is 404 (no listings). Only GET and
// HEAD are allowed.
func Handler(root fs.FS) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		p := r.URL.Path
		if !strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || strings.Contains(p, "\x00") {
			http.NotFound(w, r)
			return
		}
		for _, seg := range strings.Split(p, "/") {
			if seg == ".." {
				http.Error(w, "path outside the site", http.StatusBadRequest)
				return
			}
			if strings.HasPrefix(seg, ".") {
				http.NotFound(w, r) // dotfiles are not part of the site
				return
			}
		}
		name := strings.TrimPrefix(path.Clean(p), "/")
		if name == "" {
			name = "."
		}
		if !fs.ValidPath(name) {
			http.NotFound(w, r)
			return
		}
		st, err := fs.Stat(root, name)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if st.IsDir() {
			if !strings.HasSuffix(p, "/") {
				// Relative links in the index must resolve inside the directory.
				http.Redirect(w, r, path.Base(p)+"/", http.StatusMovedPermanently)
				return
			}
			name = path.Join(name, "index.html")
			if st, err = fs.Stat(root, name); err != nil || st.IsDir() {
				http.NotFound(w, r)
				return
			}
		}
		if !st.Mode().IsRegular() {
			http.NotFound(w, r) // a FIFO or a device would block or never end
			return
		}
		h := w.Header()
		h.Set("Content-Type", ContentType(name))
		h.Set("Cache-Control", "no-cache")
		pageHeaders(h, name)
		if path.Ext(name) == ".wasm" {
			// The app's heatmap page runs in a sandboxed iframe (an opaque
			// origin, so that the browser gives it a thread of its own):
			// its fetch of heatmap.wasm is cross-origin. GitHub Pages
			// sends the same header for every file.
			h.Set("Access-Control-Allow-Origin", "*")
		}
		serveName := name
		if ext := path.Ext(name); ext != ".gz" && ext != ".br" {
			for _, enc := range encodings {
				est, err := fs.Stat(root, name+enc.ext)
				if err != nil || !est.Mode().IsRegular() {
					continue
				}
				if h.Get("Vary") == "" {
					h.Set("Vary", "Accept-Encoding")
				}
				if serveName == name && AcceptsEncoding(r.Header.Get("Accept-Encoding"), enc.coding) {
					h.Set("Content-Encoding", enc.coding)
					serveName, st = name+enc.ext, est
				}
			}
		}
		f, err := root.Open(serveName)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		rs, ok := f.(io.ReadSeeker)
		if !ok {
			b, err := io.ReadAll(f)
			if err != nil {
				http.Error(w, "read error", http.StatusInternalServerError)
				return
			}
			rs = bytes.NewReader(b)
		}
		if serveName != name && r.Header.Get("Range") == "" {
			// ServeContent leaves the length out of encoded answers; the
			// stored copy's size is the length sent (for progress bars).
			h.Set("Content-Length", strconv.FormatInt(st.Size(), 10))
		}
		http.ServeContent(w, r, name, st.ModTime(), rs)
	})
}

// frameableAnywhere are the pages any site may frame: the embed page is
// made for iframes in blog posts, and the heatmap page is framed by it (so
// by whatever frames it) and by the app.
var frameableAnywhere = map[string]bool{"embed.html": true, "heatmap.html": true}

// pageHeaders sets the security headers of the answer for file name:
// nosniff and no-referrer everywhere; for an HTML page, who may frame it.
func pageHeaders(h http.Header, name string) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	if !strings.HasPrefix(ContentType(name), "text/html") {
		return
	}
	if frameableAnywhere[path.Base(name)] {
		h.Set("Content-Security-Policy", "frame-ancestors *")
		return
	}
	h.Set("Content-Security-Policy", "frame-ancestors 'self'")
	h.Set("X-Frame-Options", "SAMEORIGIN")
}

// Timeouts of the server Run starts: a client must send its headers within
// ReadHeaderTimeout and its request within ReadTimeout, take an answer (the
// largest file is app.wasm, a few MB) within WriteTimeout, and a kept-alive
// connection is closed after IdleTimeout.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 30 * time.Second
	WriteTimeout      = 60 * time.Second
	IdleTimeout       = 120 * time.Second
)

// timeouts are the ones newServer uses (the constants; tests shorten them).
var timeouts = [4]time.Duration{ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout}

// newServer is the server of Run for the site in root.
func newServer(root fs.FS) *http.Server {
	return &http.Server{Handler: Handler(root), ReadHeaderTimeout: timeouts[0], ReadTimeout: timeouts[1],
		WriteTimeout: timeouts[2], IdleTimeout: timeouts[3], MaxHeaderBytes: 64 << 10}
}

// encodings are the precompressed copies looked for, preferred first.
var encodings = []struct{ coding, ext string }{{"br", ".br"}, {"gzip", ".gz"}}

// AcceptsGzip reports whether an Accept-Encoding header value allows gzip.
func AcceptsGzip(header string) bool { return AcceptsEncoding(header, "gzip") }

// AcceptsEncoding reports whether an Accept-Encoding header value allows
// the content coding: listed (gzip also as x-gzip) or covered by * with a
// nonzero quality; an explicit q=0 for the coding wins over *.
func AcceptsEncoding(header, coding string) bool {
	star := false
	for _, part := range strings.Split(header, ",") {
		fields := strings.Split(part, ";")
		c := strings.ToLower(strings.TrimSpace(fields[0]))
		q := 1.0
		for _, f := range fields[1:] {
			k, v, ok := strings.Cut(strings.TrimSpace(f), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					x = 0
				}
				q = x
			}
		}
		switch {
		case c == coding, coding == "gzip" && c == "x-gzip":
			return q > 0
		case c == "*":
			star = q > 0
		}
	}
	return star
}

// Run serves dir on addr (DefaultAddr when empty) until ctx is done,
// printing the URL to out. When the port is taken it falls back to a free
// port on the same host.
func Run(ctx context.Context, addr, dir string, out io.Writer) error {
	if addr == "" {
		addr = DefaultAddr
	}
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("serve: %w (build the site first: make web)", err)
	case !st.IsDir():
		return fmt.Errorf("serve: %s is not a directory", dir)
	}
	if _, err := os.Stat(path.Join(dir, "index.html")); err != nil {
		return fmt.Errorf("serve: %s has no index.html (build the site first: make web)", dir)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil && errors.Is(err, syscall.EADDRINUSE) {
		host, _, _ := net.SplitHostPort(addr)
		ln, err = net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err == nil {
			fmt.Fprintf(out, "serve: %s is in use, using a free port\n", addr)
		}
	}
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %w", addr, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		ln.Close()
		return fmt.Errorf("serve: %w", err)
	}
	defer root.Close()
	srv := newServer(root.FS())
	if w := exposure(ln.Addr()); w != "" {
		fmt.Fprintf(out, "serve: warning: %s\n", w)
	}
	fmt.Fprintf(out, "serving %s on %s\n", dir, URL(ln.Addr()))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		<-done
		return nil
	}
}

// exposure returns a warning when a listener's address is reachable from
// other machines (not loopback), else "".
func exposure(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return ""
	}
	ip := net.ParseIP(host)
	switch {
	case ip != nil && ip.IsLoopback():
		return ""
	case host == "" || ip != nil && ip.IsUnspecified():
		return fmt.Sprintf("listening on every interface (%s): any machine that can reach this one can load the site; use -addr 127.0.0.1:%s to keep it on this machine", a, port)
	}
	return fmt.Sprintf("listening on %s, which is not a loopback address: other machines may reach it; use -addr 127.0.0.1:%s to keep it on this machine", a, port)
}

// URL is the address to open in a browser for a listener's address; an
// unspecified host (all interfaces) is shown as 127.0.0.1, which reaches it
// from this machine (Run warns that others can too).
func URL(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return "http://" + a.String() + "/"
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

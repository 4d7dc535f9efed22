package serve

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"time"
)

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func site(t *testing.T) fstest.MapFS {
	return fstest.MapFS{
		"index.html":                  {Data: []byte("<!doctype html><p>app")},
		"index.html.gz":               {Data: gz(t, "<!doctype html><p>app")},
		"app.wasm":                    {Data: []byte("\x00asm wasm body")},
		"app.wasm.gz":                 {Data: gz(t, "\x00asm wasm body")},
		"app.wasm.br":                 {Data: []byte("BROTLI")},
		"heatmap.wasm":                {Data: []byte("\x00asm heat")},
		"heatmap.wasm.br":             {Data: []byte("BROTLI heat")},
		"worker.js":                   {Data: []byte("importScripts()")},
		"app.css":                     {Data: []byte("body{}")},
		"samples/default.safetensors": {Data: []byte("tensors")},
		"samples/notes.txt":           {Data: []byte("notes")},
		"empty/.keep":                 {Data: nil},
	}
}

func TestHandler(t *testing.T) {
	tests := []struct {
		name, method, path, accept string
		code                       int
		ctype, encoding, body      string
		vary                       bool
	}{
		{"root is index", "GET", "/", "", 200, "text/html; charset=utf-8", "", "<!doctype html><p>app", true},
		{"index gzip", "GET", "/index.html", "gzip, deflate, br", 200, "text/html; charset=utf-8", "gzip", "<!doctype html><p>app", true},
		{"wasm plain", "GET", "/app.wasm", "", 200, "application/wasm", "", "\x00asm wasm body", true},
		{"wasm gzip", "GET", "/app.wasm", "gzip", 200, "application/wasm", "gzip", "\x00asm wasm body", true},
		{"wasm gzip refused", "GET", "/app.wasm", "gzip;q=0, deflate", 200, "application/wasm", "", "\x00asm wasm body", true},
		{"wasm br preferred", "GET", "/app.wasm", "gzip, deflate, br, zstd", 200, "application/wasm", "br", "BROTLI", true},
		{"wasm br refused", "GET", "/app.wasm", "gzip, br;q=0", 200, "application/wasm", "gzip", "\x00asm wasm body", true},
		{"br only, gzip client", "GET", "/heatmap.wasm", "gzip", 200, "application/wasm", "", "\x00asm heat", true},
		{"br only, br client", "GET", "/heatmap.wasm", "br", 200, "application/wasm", "br", "BROTLI heat", true},
		{"wasm star", "GET", "/app.wasm", "*", 200, "application/wasm", "br", "BROTLI", true},
		{"wasm identity only", "GET", "/app.wasm", "identity", 200, "application/wasm", "", "\x00asm wasm body", true},
		{"js", "GET", "/worker.js", "gzip", 200, "text/javascript; charset=utf-8", "", "importScripts()", false},
		{"css", "GET", "/app.css", "", 200, "text/css; charset=utf-8", "", "body{}", false},
		{"sample", "GET", "/samples/default.safetensors", "", 200, "application/octet-stream", "", "tensors", false},
		{"gz asked directly", "GET", "/app.wasm.gz", "", 200, "application/gzip", "", "", false},
		{"head", "HEAD", "/app.css", "", 200, "text/css; charset=utf-8", "", "", false},
		{"missing", "GET", "/nope.js", "", 404, "", "", "", false},
		{"dir without index", "GET", "/samples/", "", 404, "", "", "", false},
		{"dir without index 2", "GET", "/empty/", "", 404, "", "", "", false},
		{"dir redirect", "GET", "/samples", "", 301, "", "", "", false},
		{"traversal", "GET", "/../etc/passwd", "", 400, "", "", "", false},
		{"traversal inner", "GET", "/samples/../../x", "", 400, "", "", "", false},
		{"post", "POST", "/index.html", "", 405, "", "", "", false},
	}
	h := Handler(site(t))
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://x"+tc.path, nil)
			if tc.path != req.URL.Path {
				req.URL.Path = tc.path // keep the dots unnormalised
			}
			if tc.accept != "" {
				req.Header.Set("Accept-Encoding", tc.accept)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			res := rec.Result()
			if res.StatusCode != tc.code {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.code)
			}
			if tc.code != 200 {
				return
			}
			if got := res.Header.Get("Content-Type"); got != tc.ctype {
				t.Errorf("Content-Type %q, want %q", got, tc.ctype)
			}
			if got := res.Header.Get("Content-Encoding"); got != tc.encoding {
				t.Errorf("Content-Encoding %q, want %q", got, tc.encoding)
			}
			if got := strings.Contains(res.Header.Get("Vary"), "Accept-Encoding"); got != tc.vary {
				t.Errorf("Vary %q, want Accept-Encoding: %v", res.Header.Get("Vary"), tc.vary)
			}
			// WebAssembly only may be fetched from any origin (the app's
			// sandboxed heatmap page has an opaque one).
			wantCORS := ""
			if strings.HasSuffix(tc.path, ".wasm") {
				wantCORS = "*"
			}
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != wantCORS {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, wantCORS)
			}
			if tc.encoding != "" && res.ContentLength <= 0 {
				t.Errorf("encoded answer without Content-Length")
			}
			var body io.Reader = res.Body
			if tc.encoding == "gzip" {
				zr, err := gzip.NewReader(res.Body)
				if err != nil {
					t.Fatalf("gzip body: %v", err)
				}
				body = zr
			}
			b, _ := io.ReadAll(body)
			if tc.body != "" && string(b) != tc.body {
				t.Errorf("body %q, want %q", b, tc.body)
			}
		})
	}
}

// TestNoEscape serves a real directory next to a secret file and tries the
// usual ways out.
func TestNoEscape(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "dist")
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	os.WriteFile(filepath.Join(root, "index.html"), []byte("ok"), 0o644)
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("SECRET"), 0o644)
	srv := httptest.NewServer(Handler(os.DirFS(root)))
	defer srv.Close()
	for _, p := range []string{"/../secret.txt", "/%2e%2e/secret.txt", "/sub/..%2f..%2fsecret.txt", "/..%5csecret.txt", "/sub/", "/./../secret.txt"} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(conn, "GET "+p+" HTTP/1.0\r\nHost: x\r\n\r\n")
		b, _ := io.ReadAll(conn)
		conn.Close()
		if bytes.Contains(b, []byte("SECRET")) {
			t.Errorf("%s: served the file outside the root", p)
		}
		if !bytes.HasPrefix(b, []byte("HTTP/1.0 4")) && !bytes.HasPrefix(b, []byte("HTTP/1.1 4")) {
			t.Errorf("%s: %q, want a 4xx", p, strings.SplitN(string(b), "\r\n", 2)[0])
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	tests := map[string]bool{
		"":                    false,
		"gzip":                true,
		"GZIP":                true,
		"deflate, gzip;q=1.0": true,
		"gzip;q=0":            false,
		"gzip; q=0.000":       false,
		"br, *;q=0.1":         true,
		"*;q=0, gzip":         true,
		"gzip;q=0, *":         false,
		"identity":            false,
		"x-gzip":              true,
	}
	for h, want := range tests {
		if got := AcceptsGzip(h); got != want {
			t.Errorf("AcceptsGzip(%q) = %v, want %v", h, got, want)
		}
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("hello"), 0o644)
	// Occupy a port so that Run must fall back to another one.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, busy.Addr().String(), dir, pw); pw.Close() }()
	var url string
	buf := make([]byte, 4096)
	var got string
	deadline := time.Now().Add(10 * time.Second)
	for url == "" && time.Now().Before(deadline) {
		n, err := pr.Read(buf)
		if err != nil {
			t.Fatalf("reading Run's output: %v (so far %q)", err, got)
		}
		got += string(buf[:n])
		if i := strings.Index(got, "http://"); i >= 0 && strings.Contains(got[i:], "\n") {
			url = strings.TrimSpace(strings.SplitN(got[i:], "\n", 2)[0])
		}
	}
	if !strings.Contains(got, "in use") || strings.Contains(url, busy.Addr().String()) {
		t.Fatalf("output %q: want a fallback from the busy %s", got, busy.Addr())
	}
	go io.Copy(io.Discard, pr)
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "hello" {
		t.Fatalf("GET %s: %q", url, b)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestRunErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, dir, want string }{
		{"missing dir", filepath.Join(dir, "nope"), "make web"},
		{"no index", dir, "no index.html"},
	}
	for _, tc := range tests {
		err := Run(context.Background(), "127.0.0.1:0", tc.dir, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want it to mention %q", tc.name, err, tc.want)
		}
	}
}

// realSite makes a site directory with a secret file beside it, a link
// inside pointing out to it, a link inside pointing to a file inside,
// dotfiles and a named pipe, and returns the handler Run would use.
func realSite(t *testing.T) http.Handler {
	t.Helper()
	dir := t.TempDir()
	root := filepath.Join(dir, "dist")
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	os.WriteFile(filepath.Join(root, "index.html"), []byte("ok"), 0o644)
	os.WriteFile(filepath.Join(root, "embed.html"), []byte("embed"), 0o644)
	os.WriteFile(filepath.Join(root, "big.wasm"), bytes.Repeat([]byte("w"), 8<<20), 0o644)
	os.WriteFile(filepath.Join(root, ".built"), []byte("SECRET dot"), 0o644)
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("SECRET git"), 0o644)
	os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("SECRET"), 0o644)
	if err := os.Symlink("../secret.txt", filepath.Join(root, "out.txt")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(dir, "secret.txt"), filepath.Join(root, "sub", "abs.txt"))
	os.Symlink("../index.html", filepath.Join(root, "sub", "in.html"))
	os.Symlink("..", filepath.Join(root, "up"))
	mkfifo(filepath.Join(root, "pipe.js"))
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return newServer(r.FS()).Handler
}

func get(h http.Handler, p string) *http.Response {
	req := httptest.NewRequest("GET", "http://x"+p, nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

// TestNoSymlinkEscapeNoDotfiles checks that links out of the root, dotfiles
// and dot directories, and non-regular files are 404, while a link inside
// the root is served.
func TestNoSymlinkEscapeNoDotfiles(t *testing.T) {
	h := realSite(t)
	for _, p := range []string{"/out.txt", "/sub/abs.txt", "/up/secret.txt", "/.built", "/.git/config", "/sub/.hidden", "/pipe.js"} {
		res := get(h, p)
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != 404 || bytes.Contains(b, []byte("SECRET")) {
			t.Errorf("GET %s: %d %q, want 404", p, res.StatusCode, b)
		}
	}
	if res := get(h, "/sub/in.html"); res.StatusCode != 200 {
		t.Errorf("a link inside the root: %d, want 200", res.StatusCode)
	}
}

// TestPageHeaders checks who may frame each page.
func TestPageHeaders(t *testing.T) {
	h := realSite(t)
	for _, c := range []struct{ path, csp, xfo string }{
		{"/", "frame-ancestors 'self'", "SAMEORIGIN"},
		{"/index.html", "frame-ancestors 'self'", "SAMEORIGIN"},
		{"/embed.html", "frame-ancestors *", ""},
		{"/big.wasm", "", ""},
	} {
		res := get(h, c.path)
		hd := res.Header
		if res.StatusCode != 200 || hd.Get("Content-Security-Policy") != c.csp || hd.Get("X-Frame-Options") != c.xfo ||
			hd.Get("X-Content-Type-Options") != "nosniff" || hd.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s: %d %v", c.path, res.StatusCode, hd)
		}
	}
}

// TestWriteTimeout checks that clients that never read an answer are let go
// after the write timeout, not held.
func TestWriteTimeout(t *testing.T) {
	saved := timeouts
	timeouts[2] = 300 * time.Millisecond
	defer func() { timeouts = saved }()
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = newServer(nil)
	srv.Config.Handler = realSite(t)
	srv.Start()
	defer srv.Close()
	var conns []net.Conn
	for range 5 {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /big.wasm HTTP/1.1\r\nHost: x\r\n\r\n")
		conns = append(conns, c)
	}
	time.Sleep(600 * time.Millisecond)
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := io.Copy(io.Discard, c)
		if err != nil || n >= 8<<20 {
			t.Errorf("client %d: read %d bytes, %v; want the connection closed before the whole 8 MiB", i, n, err)
		}
	}
}

func TestExposure(t *testing.T) {
	for _, c := range []struct{ addr, want string }{
		{"127.0.0.1:8080", ""},
		{"[::1]:8080", ""},
		{"0.0.0.0:8080", "listening on every interface (0.0.0.0:8080)"},
		{"[::]:9", "listening on every interface ([::]:9)"},
		{"192.168.1.5:80", "listening on 192.168.1.5:80, which is not a loopback address"},
	} {
		a, err := net.ResolveTCPAddr("tcp", c.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := exposure(a); !strings.HasPrefix(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("exposure(%s) = %q, want %q...", c.addr, got, c.want)
		}
	}
	// Run on every interface says so.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("hello"), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- Run(ctx, "0.0.0.0:0", dir, &out) }()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "serving") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if !strings.Contains(out.String(), "serve: warning: listening on every interface (") {
		t.Errorf("Run on 0.0.0.0 printed %q, want the warning", out.String())
	}
}

// Package e2e holds the real-browser end-to-end tests of the web app: they
// serve web/dist (built by `make web`) with internal/serve on 127.0.0.1 and
// drive Debian's headless Chromium with chromedp. This file has the helpers
// the tests share: find the browser, serve the site (with the test pages of
// testdata/ on top), start a browser, navigate, wait for a JavaScript
// condition, evaluate, and save screenshots under artifacts/.
//
// Set HAEOLS_SKIP_BROWSER=1 to skip the tests on a machine without
// Chromium; otherwise a missing browser fails them.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/haeols/haeols/internal/serve"
)

// Chromium paths tried in order (Debian's package first).
var chromiumPaths = []string{"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome", "/usr/bin/google-chrome-stable"}

// ChromiumPath returns the browser to drive: $HAEOLS_CHROMIUM, or the first
// of the usual paths that exists.
func ChromiumPath() (string, error) {
	if p := os.Getenv("HAEOLS_CHROMIUM"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("HAEOLS_CHROMIUM=%s: %w", p, err)
		}
		return p, nil
	}
	for _, p := range chromiumPaths {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium found (tried %s): install it with `apt-get update && apt-get install -y chromium` (as .ci/run does), or set HAEOLS_SKIP_BROWSER=1 to skip the browser tests", strings.Join(chromiumPaths, ", "))
}

// RepoRoot is the repository root (two levels above this package).
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// DistDir is the built site: web/dist, or the folder HAEOLS_DIST names
// (another build of the site, to measure two builds alternately with one
// test binary; the site is then not built).
func DistDir() string {
	if d := os.Getenv("HAEOLS_DIST"); d != "" {
		return d
	}
	return filepath.Join(RepoRoot(), "web", "dist")
}

// ArtifactsDir is where screenshots go (gitignored).
func ArtifactsDir() string { return filepath.Join(RepoRoot(), "web", "e2e", "artifacts") }

// BuildSite runs `make web` in the repository root (a no-op when web/dist
// is up to date) and checks that the worker was built.
func BuildSite() error {
	if os.Getenv("HAEOLS_DIST") != "" {
		return nil
	}
	cmd := exec.Command("make", "-s", "web")
	cmd.Dir = RepoRoot()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("make web: %v\n%s", err, out)
	}
	for _, f := range []string{"worker.js", "app.wasm", "wasm_exec.js"} {
		if _, err := os.Stat(filepath.Join(DistDir(), f)); err != nil {
			return fmt.Errorf("make web did not build %s: %w", f, err)
		}
	}
	return nil
}

// overlay serves a file from the first of its file systems that has it
// (the test pages and extra files over web/dist).
type overlay []fs.FS

func (o overlay) Open(name string) (fs.File, error) {
	for _, top := range o[:len(o)-1] {
		if f, err := top.Open(name); err == nil {
			if st, err := f.Stat(); err == nil && !st.IsDir() {
				return f, nil
			}
			f.Close()
		}
	}
	return o[len(o)-1].Open(name)
}

// Site is web/dist served on 127.0.0.1, with the pages of testdata/ at its
// root too (they use the site's worker.js and wasm files by relative path).
type Site struct {
	URL    string // base URL, ending in "/"
	mu     sync.Mutex
	log    []string // paths requested, in order
	enc    map[string]string
	ce     map[string]string
	status map[string][]int // HTTP status of each request of a path, in order
}

// Statuses returns the HTTP status of every request of a path, in order.
func (s *Site) Statuses(path string) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.status[path]...)
}

// statusWriter records the status an http.ResponseWriter sends.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// ContentEncoding returns the Content-Encoding the site answered a path
// with ("" for identity or when it was not requested).
func (s *Site) ContentEncoding(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ce[path]
}

// AcceptEncoding returns the Accept-Encoding header the browser sent for
// a path ("" if it was not requested).
func (s *Site) AcceptEncoding(path string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enc[path]
}

// Requests returns the paths the site was asked for so far.
func (s *Site) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log...)
}

// StartSite serves the site until the test ends.
func StartSite(t testing.TB) *Site { return startSite(t, false) }

// StartSiteWith is StartSite with the files of dir served too, over the
// site's (e.g. dir/samples/big.safetensors as samples/big.safetensors).
func StartSiteWith(t testing.TB, dir string) *Site { return startSite(t, false, os.DirFS(dir)) }

// StartSiteNoCORS serves the site like a static host that sends no
// Access-Control-Allow-Origin header: a sandboxed page cannot fetch its
// files.
func StartSiteNoCORS(t testing.TB) *Site { return startSite(t, true) }

// noCORS drops Access-Control-Allow-Origin from the answers.
type noCORS struct{ http.ResponseWriter }

func (w noCORS) WriteHeader(code int) {
	w.Header().Del("Access-Control-Allow-Origin")
	w.ResponseWriter.WriteHeader(code)
}

func (w noCORS) Write(b []byte) (int, error) {
	w.Header().Del("Access-Control-Allow-Origin")
	return w.ResponseWriter.Write(b)
}

func startSite(t testing.TB, dropCORS bool, extra ...fs.FS) *Site {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	site := &Site{URL: serve.URL(ln.Addr()), enc: map[string]string{}, ce: map[string]string{}, status: map[string][]int{}}
	layers := append(append(overlay{}, extra...), os.DirFS(filepath.Join(RepoRoot(), "web", "e2e", "testdata")), os.DirFS(DistDir()))
	h := serve.Handler(layers)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site.mu.Lock()
		site.log = append(site.log, r.URL.Path)
		site.enc[r.URL.Path] = r.Header.Get("Accept-Encoding")
		site.mu.Unlock()
		sw := &statusWriter{ResponseWriter: w}
		if dropCORS {
			sw.ResponseWriter = noCORS{w}
		}
		h.ServeHTTP(sw, r)
		site.mu.Lock()
		site.ce[r.URL.Path] = w.Header().Get("Content-Encoding")
		site.status[r.URL.Path] = append(site.status[r.URL.Path], sw.code)
		site.mu.Unlock()
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return site
}

// Browser is one headless Chromium tab.
type Browser struct {
	Ctx context.Context
	t   testing.TB
	mu  sync.Mutex
	con []string // console messages and exceptions of the page
}

// NewBrowser starts headless Chromium with a fresh profile and no access
// to the network beyond 127.0.0.1; it stops when the test ends. It has no
// GPU: WebGPU finds no adapter there.
func NewBrowser(t testing.TB) *Browser {
	t.Helper()
	return newBrowser(t, chromedp.DisableGPU)
}

// NewBrowserWebGPU is NewBrowser with WebGPU enabled: on a machine without a
// GPU, Chromium's SwiftShader adapter (a software Vulkan device).
func NewBrowserWebGPU(t testing.TB) *Browser {
	t.Helper()
	return newBrowser(t, chromedp.Flag("enable-unsafe-webgpu", true))
}

func newBrowser(t testing.TB, gpuOpt chromedp.ExecAllocatorOption) *Browser {
	t.Helper()
	exe, err := ChromiumPath()
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		gpuOpt,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-component-update", true),
		// Every host but the test server resolves to nothing: a request
		// beyond the app's own files fails (and shows in the console).
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.Flag("enable-unsafe-swiftshader", true),
	)
	// HAEOLS_JS_FLAGS passes V8 flags (e.g. --no-liftoff, to see what
	// V8's baseline tier costs); for experiments only: the measurements
	// that count use Chromium as it comes.
	if v := os.Getenv("HAEOLS_JS_FLAGS"); v != "" {
		opts = append(opts, chromedp.Flag("js-flags", v))
	}
	// HAEOLS_CHROME_LOG names a file for Chromium's output: the console
	// messages of the pages and their workers, and with
	// HAEOLS_JS_FLAGS=--trace-wasm-compilation-times which wasm functions
	// V8 compiled, with which tier, and how long it took. Each browser of
	// a test appends to it.
	if v := os.Getenv("HAEOLS_CHROME_LOG"); v != "" {
		f, err := os.OpenFile(v, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			t.Fatalf("HAEOLS_CHROME_LOG: %v", err)
		}
		t.Cleanup(func() { f.Close() })
		opts = append(opts, chromedp.CombinedOutput(f), chromedp.Flag("enable-logging", "stderr"), chromedp.Flag("v", "0"))
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	b := &Browser{Ctx: ctx, t: t}
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		cancel()
		cancelA()
		t.Fatalf("start %s: %v", exe, err)
	}
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.con = append(b.con, fmt.Sprintf("%s: %s", m.Type, m.Text))
			b.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		if t.Failed() {
			for _, l := range b.Console() {
				t.Logf("console %s", l)
			}
		}
		cancel()
		cancelA()
	})
	return b
}

// Console returns the page's console messages so far.
func (b *Browser) Console() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.con...)
}

// Navigate opens url and waits for its load event.
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	if err := chromedp.Do(b.Ctx, chromedp.Navigate(url)); err != nil {
		b.t.Fatalf("navigate %s: %v", url, err)
	}
}

// WaitFor waits until the JavaScript expression is truthy, failing the test
// after timeout (with failure, if non-empty, a JS expression whose value is
// shown).
func (b *Browser) WaitFor(expr string, timeout time.Duration, failure string) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := Eval[bool](b, "!!("+expr+")")
		if err == nil && ok {
			return
		}
		last = err
		time.Sleep(25 * time.Millisecond)
	}
	extra := ""
	if failure != "" {
		v, _ := Eval[any](b, failure)
		extra = fmt.Sprintf(" (%s = %v)", failure, v)
	}
	if last != nil {
		extra += fmt.Sprintf(" (last error: %v)", last)
	}
	b.t.Fatalf("waiting %v for %s%s", timeout, expr, extra)
}

// Eval evaluates a JavaScript expression (awaiting a promise) and decodes
// its JSON value into T.
func Eval[T any](b *Browser, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(b.Ctx, 60*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// MustEval is Eval that fails the test on error.
func MustEval[T any](b *Browser, expr string) T {
	b.t.Helper()
	v, err := Eval[T](b, expr)
	if err != nil {
		b.t.Fatalf("eval %s: %v", expr, err)
	}
	return v
}

// Screenshot saves the viewport as artifacts/name.png and returns the
// path.
func (b *Browser) Screenshot(name string) string {
	b.t.Helper()
	png, err := chromedp.Run(b.Ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(ArtifactsDir(), 0o755); err != nil {
		b.t.Fatal(err)
	}
	p := filepath.Join(ArtifactsDir(), name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot %s", p)
	return p
}

// errSkip marks a run without a browser (HAEOLS_SKIP_BROWSER=1).
var errSkip = errors.New("HAEOLS_SKIP_BROWSER=1: browser tests skipped")

// Setup is what TestMain runs first: the browser must exist (unless
// HAEOLS_SKIP_BROWSER=1, which returns errSkip) and the site is built.
func Setup() error {
	if os.Getenv("HAEOLS_SKIP_BROWSER") == "1" {
		return errSkip
	}
	if _, err := ChromiumPath(); err != nil {
		return err
	}
	return BuildSite()
}

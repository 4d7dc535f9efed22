package e2e

import (
	"bufio"
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"testing"
)

// markWasm instantiates a one-function wasm module and calls its function:
// with --trace-wasm-compilation-times V8 logs its compilation, a line of a
// module no other line names, which marks that moment in Chromium's log.
const markWasm = `(() => {
	const b = new Uint8Array([0,97,115,109,1,0,0,0, 1,4,1,96,0,0, 3,2,1,0, 7,5,1,1,102,0,0, 10,4,1,2,0,11]);
	new WebAssembly.Instance(new WebAssembly.Module(b)).exports.f();
	return true })()`

// compiledRe matches a --trace-wasm-compilation-times line: module, function
// index, tier, microseconds, body size.
var compiledRe = regexp.MustCompile(`^Compiled function (0x[0-9a-f]+)#(\d+) using (\w+), took (\d+) μs.*bodysize (\d+)`)

// TestCompileDuringScrub logs which wasm functions V8 compiled while a cold
// scrub ran (see scrubLatency): per module, how many functions each tier
// compiled and for how long, and the TurboFan compilations that took
// longest, named from the name sections of web/dist's app.wasm and
// heatmap.wasm when the site was built with them (make web
// WASMFLAGS=-trimpath). A compilation during the drag is code that had not
// run enough before it: V8 compiles it on another thread, on cores the
// drag needs. HAEOLS_COMPILE=1 runs it.
func TestCompileDuringScrub(t *testing.T) {
	if os.Getenv("HAEOLS_COMPILE") == "" {
		t.Skip("HAEOLS_COMPILE=1 lists the wasm functions V8 compiles during a cold scrub")
	}
	logPath := filepath.Join(t.TempDir(), "chrome.log")
	t.Setenv("HAEOLS_JS_FLAGS", "--trace-wasm-compilation-times")
	t.Setenv("HAEOLS_CHROME_LOG", logPath)
	_, b := openApp(t, "")
	waitFirstAnswers(b)
	MustEval[bool](b, markWasm)
	scrubLatency(t, b, "cold", 30, 10)
	MustEval[bool](b, markWasm)

	type comp struct {
		module, tier string
		fn           int
		us           int
	}
	var all []comp
	marks := []int{}
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := compiledRe.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		fn, _ := strconv.Atoi(m[2])
		us, _ := strconv.Atoi(m[4])
		if m[5] == "2" && fn == 0 { // the marker's empty function
			marks = append(marks, len(all))
			continue
		}
		all = append(all, comp{m[1], m[3], fn, us})
	}
	f.Close()
	if len(marks) != 2 {
		t.Fatalf("%d markers in Chromium's log, want 2", len(marks))
	}
	during := all[marks[0]:marks[1]]
	type agg struct{ n, us int }
	per := map[string]*agg{}
	for _, c := range during {
		k := c.module + " " + c.tier
		if per[k] == nil {
			per[k] = &agg{}
		}
		per[k].n++
		per[k].us += c.us
	}
	keys := make([]string, 0, len(per))
	for k := range per {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	t.Logf("compiled during the scrub (%d functions; before it, %d):", len(during), marks[0])
	for _, k := range keys {
		t.Logf("  module %s: %d functions, %.1f ms", k, per[k].n, float64(per[k].us)/1000)
	}
	app := wasmNames(filepath.Join(RepoRoot(), "web", "dist", "app.wasm"))
	hm := wasmNames(filepath.Join(RepoRoot(), "web", "dist", "heatmap.wasm"))
	sort.Slice(during, func(i, j int) bool { return during[i].us > during[j].us })
	for _, c := range during[:min(25, len(during))] {
		if c.tier != "TurboFan" {
			continue
		}
		t.Logf("  %s #%d %.1f ms  app.wasm: %s  heatmap.wasm: %s", c.module, c.fn, float64(c.us)/1000, nameOr(app, c.fn), nameOr(hm, c.fn))
	}
}

func nameOr(names map[int]string, fn int) string {
	if n, ok := names[fn]; ok {
		return n
	}
	return "?"
}

// wasmNames reads the function names of a wasm file's name section (nil
// when it has none or cannot be read).
func wasmNames(path string) map[int]string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) < 8 {
		return nil
	}
	uleb := func(i int) (int, int) {
		v, n := binary.Uvarint(b[i:])
		if n <= 0 {
			return 0, len(b)
		}
		return int(v), i + n
	}
	out := map[int]string{}
	for i := 8; i < len(b); {
		id := b[i]
		size, j := uleb(i + 1)
		end := min(j+size, len(b))
		if id == 0 {
			nl, k := uleb(j)
			if k+nl <= end && string(b[k:k+nl]) == "name" {
				for k += nl; k < end; {
					sub := b[k]
					ss, p := uleb(k + 1)
					se := min(p+ss, end)
					if sub == 1 {
						cnt, q := uleb(p)
						for range cnt {
							var idx, l int
							idx, q = uleb(q)
							l, q = uleb(q)
							if q+l > se {
								break
							}
							out[idx] = string(b[q : q+l])
							q += l
						}
					}
					k = se
				}
			}
		}
		i = end
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

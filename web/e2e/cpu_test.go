package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// threadCPU is the CPU time (ms) of every thread of the running Chromium
// processes, by "pid/process type/thread name", read from /proc.
type threadCPU map[string]float64

func readThreadCPU() threadCPU {
	s := threadCPU{}
	tick := 1000.0 / 100 // USER_HZ is 100 on Linux
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range pids {
		cmd, err := os.ReadFile(p + "/cmdline")
		if err != nil || !strings.Contains(string(cmd), "chromium") {
			continue
		}
		typ := "browser"
		if i := strings.Index(string(cmd), "--type="); i >= 0 {
			typ = strings.FieldsFunc(string(cmd[i+7:]), func(r rune) bool { return r == 0 || r == ' ' })[0]
		}
		tasks, _ := filepath.Glob(p + "/task/*")
		for _, tk := range tasks {
			st, err := os.ReadFile(tk + "/stat")
			if err != nil {
				continue
			}
			l, r := strings.Index(string(st), "("), strings.LastIndex(string(st), ")")
			f := strings.Fields(string(st[r+2:]))
			if l < 0 || len(f) < 13 {
				continue
			}
			u, _ := strconv.ParseFloat(f[11], 64)
			sy, _ := strconv.ParseFloat(f[12], 64)
			name := string(st[l+1 : r])
			if name == "DedicatedWorker" {
				// The app's worker and its helpers, each apart.
				name += "#" + filepath.Base(tk)
			}
			s[fmt.Sprintf("%s/%s/%s", filepath.Base(p), typ, name)] += (u + sy) * tick
		}
	}
	return s
}

// logCPU logs the threads that used at least 10 ms between a and b, most
// first, and the total.
func logCPU(t *testing.T, label string, wall time.Duration, a, b threadCPU) {
	type use struct {
		thread string
		ms     float64
	}
	var us []use
	total := 0.0
	for k, v := range b {
		if d := v - a[k]; d > 0 {
			total += d
			if d >= 10 {
				us = append(us, use{k, d})
			}
		}
	}
	sort.Slice(us, func(i, j int) bool { return us[i].ms > us[j].ms })
	t.Logf("%s: %.0f ms of CPU in %.0f ms (%.2f cores)", label, total, wall.Seconds()*1000, total/(wall.Seconds()*1000))
	for _, u := range us {
		t.Logf("%s: %6.0f ms %s", label, u.ms, u.thread)
	}
}

// TestCPUScrub reads, from /proc, how much CPU each thread of Chromium
// used during TestAppScrubLatency's cold and warm scrubs, and during a
// scrub with the heatmap iframe hidden (no heatmap frames). It told
// session 9 where the two cores go: the worker ("DedicatedWorker" of the
// app page's renderer), the pages' main threads ("chromium"), V8's
// background compiling ("ThreadPoolForeg"), and the GPU process's
// software GL, which only the heatmap's WebGL keeps busy. A tool, skipped
// unless HAEOLS_CPU_SPLIT=1 (Linux only).
func TestCPUScrub(t *testing.T) {
	if os.Getenv("HAEOLS_CPU_SPLIT") == "" {
		t.Skip("set HAEOLS_CPU_SPLIT=1 to read the CPU split of a scrub")
	}
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("needs Linux's /proc")
	}
	_, b := openApp(t, "")
	waitFirstAnswers(b)
	for _, phase := range []string{"cold", "warm", "heatmap hidden"} {
		switch phase {
		case "warm":
			MustEval[bool](b, `(() => { window.haeolsTimings = {}; return true })()`)
			b.WaitFor(`window.haeolsTimings.ladderDone !== undefined`, 90*time.Second, `JSON.stringify(window.haeolsTimings)`)
		case "heatmap hidden":
			MustEval[bool](b, `(() => { document.getElementById("heatmap-frame").style.visibility = "hidden"; return true })()`)
			time.Sleep(time.Second)
		}
		c0, t0 := readThreadCPU(), time.Now()
		switch phase {
		case "cold":
			scrubLatency(t, b, "cold", 30, 10)
		case "warm":
			scrubLatency(t, b, "warm", 10, 30)
		default:
			// A hidden iframe draws nothing, so no waiting for its maps.
			dragRatio(b, 30, 10)
			time.Sleep(300 * time.Millisecond)
		}
		logCPU(t, phase, time.Since(t0), c0, readThreadCPU())
	}
}

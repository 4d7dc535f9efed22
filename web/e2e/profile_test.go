package e2e

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/profiler"
	"github.com/chromedp/chromedp"
)

// TestProfileScrub records Chromium's CPU profile of the page's main thread
// (the app and the heatmap iframe) while the ratio slider is scrubbed as in
// TestAppScrubLatency, and writes it where HAEOLS_PAGE_PROFILE says (a
// .cpuprofile file DevTools opens; build the site with
// `make web WASMFLAGS=-trimpath` for Go function names). It is a tool for
// finding what occupies the main thread, skipped unless asked for.
func TestProfileScrub(t *testing.T) {
	out := os.Getenv("HAEOLS_PAGE_PROFILE")
	if out == "" {
		t.Skip("set HAEOLS_PAGE_PROFILE=file.cpuprofile to record a profile")
	}
	_, b := openApp(t, "")
	waitFirstAnswers(b)
	if _, err := chromedp.Call(b.Ctx, profiler.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.Ctx, profiler.SetSamplingInterval, profiler.SetSamplingIntervalParams{Interval: 200}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(b.Ctx, profiler.Start, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	dragRatio(b, 30, 10)
	time.Sleep(500 * time.Millisecond)
	res, err := chromedp.Call(b.Ctx, profiler.Stop, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(res.Profile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("profile of the scrub written to %s", out)
}

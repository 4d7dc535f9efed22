package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// tourShows is true when the tour's sentence is built (not waiting) and
// no load runs.
const tourShows = `(() => { const p = document.getElementById("tour-text");
	return !!p && p.innerText !== "" && !p.innerText.startsWith("Waiting") && !document.querySelector(".status .loading"); })()`

// tourState describes the tour for a failed wait.
const tourState = `JSON.stringify({text: (document.getElementById("tour-text") || {}).innerText, title: (document.getElementById("head-title") || {}).innerText,
	search: location.search, error: (document.getElementById("error") || {}).innerText})`

// titleErr is the selected head's error as its title shows it ("err 9.64 %").
func titleErr(t *testing.T, b *Browser) string {
	t.Helper()
	title := MustEval[string](b, `document.getElementById("head-title").innerText`)
	i := strings.LastIndex(title, "err ")
	if i < 0 {
		t.Fatalf("head title %q names no error", title)
	}
	return title[i+len("err "):]
}

// TestAppTour walks the guided tour from a link to its first step on the
// default sample: each step shows its one control, its heatmap panel and a
// sentence whose numbers are the head view's (the head title's error, the
// ratio moved by the step's own slider), the URL names the step, and the
// last step opens the induction model and names what the says table shows.
func TestAppTour(t *testing.T) {
	_, b := openApp(t, "?tour=1&compute=cpu")
	tourWait := func(step int, extra string) string {
		t.Helper()
		// The address bar follows the view after it renders (syncURL).
		b.WaitFor(tourShows+fmt.Sprintf(` && document.getElementById("tour").dataset.step === "%d" && location.search.includes("tour=%d")`, step, step)+extra, 120*time.Second, tourState)
		return MustEval[string](b, `document.getElementById("tour-text").innerText`)
	}
	visible := func(id string) bool {
		return MustEval[bool](b, fmt.Sprintf(`(() => { const e = document.getElementById(%q); return !!e && e.offsetParent !== null; })()`, id))
	}
	controls := []string{"tour-head", "tour-ratio", "tour-phi", "tour-tau"}
	only := func(step int, want string) {
		t.Helper()
		for _, id := range controls {
			if visible(id) != (id == want) {
				t.Errorf("step %d: control %s shown %v", step, id, visible(id))
			}
		}
	}

	text := tourWait(1, "")
	only(1, "tour-head")
	if q := appQuery(t, b); q.Get("tour") != "1" || q.Get("panel") != "orig" {
		t.Errorf("step 1: URL %v, want tour=1 and the attention panel", q)
	}
	if !strings.Contains(text, "layer 0, head 0") || !strings.Contains(text, "row entropy") {
		t.Errorf("step 1: %q", text)
	}
	appShot(t, b, "app-tour-1")
	// The step's control picks another head.
	MustEval[bool](b, `(() => { const s = document.getElementById("tour-head"); s.value = "2.1"; s.dispatchEvent(new Event("change", {bubbles: true})); return true })()`)
	text = tourWait(1, ` && document.getElementById("tour-text").innerText.includes("layer 2, head 1") && location.search.includes("layer=2")`)
	if q := appQuery(t, b); q.Get("layer") != "2" || q.Get("head") != "1" {
		t.Errorf("the head picker: URL %v, want layer 2 head 1", q)
	}

	MustEval[bool](b, `(() => { document.getElementById("tour-next").click(); return true })()`)
	text = tourWait(2, "")
	only(2, "tour-ratio")
	if q := appQuery(t, b); q.Get("tour") != "2" || q.Get("panel") != "comp" {
		t.Errorf("step 2: URL %v", q)
	}
	if e := titleErr(t, b); !strings.Contains(text, "At ratio 0.30") || !strings.Contains(text, "Held-out error: "+e) {
		t.Errorf("step 2 says %q; the head title's error is %s", text, e)
	}
	// The title names the new ratio at once and the error when the head's
	// answer at it arrives: wait for an error other than the one at 0.3.
	e03 := titleErr(t, b)
	setSlider(b, "tour-ratio", 0.5)
	text = tourWait(2, ` && document.getElementById("tour-text").innerText.includes("At ratio 0.50") && document.getElementById("head-title").innerText.includes("ratio 0.5 ")`+
		fmt.Sprintf(` && document.getElementById("head-title").innerText.split("err ").pop() !== %q`, e03)+
		` && document.getElementById("tour-text").innerText.includes("Held-out error: " + document.getElementById("head-title").innerText.split("err ").pop())`)
	if e := titleErr(t, b); !strings.Contains(text, "Held-out error: "+e) || MustEval[string](b, `document.getElementById("ratio").value`) != "0.5" {
		t.Errorf("after the tour's ratio slider: %q; head error %s; main slider %s", text, e, MustEval[string](b, `document.getElementById("ratio").value`))
	}
	appShot(t, b, "app-tour-2")

	MustEval[bool](b, `(() => { document.getElementById("tour-next").click(); return true })()`)
	text = tourWait(3, "")
	only(3, "tour-phi")
	if e := titleErr(t, b); !strings.Contains(text, "least squares") || !strings.Contains(text, "held-out error "+e) {
		t.Errorf("step 3 says %q; the head title's error is %s", text, e)
	}

	MustEval[bool](b, `(() => { document.getElementById("tour-next").click(); return true })()`)
	text = tourWait(4, "")
	only(4, "tour-tau")
	if !strings.Contains(text, "the SVD stage is off") {
		t.Errorf("step 4 at τ = 1: %q", text)
	}
	setSlider(b, "tour-tau", 0.8)
	// The sentence and the head title change with the head's answer at τ = 0.8.
	text = tourWait(4, ` && document.getElementById("tour-text").innerText.includes("τ = 0.80") && !document.getElementById("tour-text").innerText.includes("keeping 100.0%")`+
		` && document.getElementById("tour-text").innerText.includes("Held-out error " + document.getElementById("head-title").innerText.split("err ").pop())`)
	if e := titleErr(t, b); !strings.Contains(text, "SVD rank") || !strings.Contains(text, "Held-out error "+e) {
		t.Errorf("step 4 at τ = 0.8: %q; the head title's error is %s", text, e)
	}
	appShot(t, b, "app-tour-4")

	// The last step needs a model: its button opens the induction model.
	MustEval[bool](b, `(() => { document.getElementById("tour-next").click(); return true })()`)
	b.WaitFor(`document.getElementById("tour").dataset.step === "5"`, 10*time.Second, tourState)
	if !visible("tour-model") || visible("tour-ratio") {
		t.Errorf("step 5 on a sample without a model: the model button shown %v, the ratio %v", visible("tour-model"), visible("tour-ratio"))
	}
	MustEval[bool](b, `(() => { document.getElementById("tour-model").click(); return true })()`)
	b.WaitFor(saysAllDone, 180*time.Second, saysState)
	text = tourWait(5, ` && document.getElementById("tour-text").innerText.includes("free run") && location.search.includes("induction")`)
	kl := MustEval[string](b, `document.querySelector("#says-table tr.primary td[data-name=kl]").textContent`)
	if q := appQuery(t, b); q.Get("sample") != "models/induction.gguf" || q.Get("tour") != "5" || q.Get("task") != "passkey" {
		t.Errorf("step 5: URL %v", q)
	}
	if !strings.Contains(text, "by "+kl+" nats") || !strings.Contains(text, "The key is") || !visible("tour-ratio") {
		t.Errorf("step 5 says %q; the says table's kl is %s", text, kl)
	}
	appShot(t, b, "app-tour-5")
	elementShot(t, b, "#tour", "app-tour-card", "")

	MustEval[bool](b, `(() => { document.getElementById("tour-next").click(); return true })()`)
	b.WaitFor(`document.getElementById("tour").classList.contains("hide") && !location.search.includes("tour=")`, 10*time.Second, tourState)
}

package worker

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/haeols/haeols/core"
	"github.com/haeols/haeols/core/eval"
	"github.com/haeols/haeols/core/gen"
	"github.com/haeols/haeols/core/kernel"
	"github.com/haeols/haeols/core/llama"
	"github.com/haeols/haeols/core/sample"
	"github.com/haeols/haeols/ui/heatmap"
	"github.com/haeols/haeols/wire"
)

type sent struct {
	r    wire.Response
	bufs map[string][]byte
}

// recorder collects the responses, round-tripped through JSON as the page
// sees them.
type recorder struct {
	t   testing.TB
	out []sent
}

func (rc *recorder) emit(r wire.Response, bufs map[string][]byte) {
	b, err := json.Marshal(r)
	if err != nil {
		rc.t.Fatalf("marshal %+v: %v", r, err)
	}
	var back wire.Response
	if err := json.Unmarshal(b, &back); err != nil {
		rc.t.Fatalf("unmarshal %s: %v", b, err)
	}
	rc.out = append(rc.out, sent{back, bufs})
}

func (rc *recorder) last() wire.Response { return rc.out[len(rc.out)-1].r }

var defParams = wire.Params{Ratio: 0.3, Lambda: core.DefaultLambda, Phi: core.DefaultPhi, Tau: core.DefaultTau}

func loaded(t testing.TB, preset string) (*Engine, *recorder, *core.Model) {
	t.Helper()
	e := &Engine{}
	rc := &recorder{t: t}
	e.Handle(wire.Request{ID: 1, Op: wire.OpLoad, Source: &wire.Source{Kind: "preset", Preset: preset}}, nil, rc.emit, nil)
	r := rc.last()
	if r.Error != "" || r.Info == nil || !r.Done {
		t.Fatalf("load %s: %+v", preset, r)
	}
	cfg, err := gen.DefaultConfig(preset)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := core.NewModel(s, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return e, rc, m
}

// TestInfoDefaults: a load's answer brings the core's default parameters
// and the sliders' ranges, which the embed page has from nowhere else.
func TestInfoDefaults(t *testing.T) {
	e, _, _ := loaded(t, "tiny")
	in := e.Info()
	d := core.DefaultParams(core.DefaultRatio)
	if want := (wire.Params{Ratio: d.Ratio, Lambda: d.Lambda, Phi: d.Phi, Tau: d.Tau}); in.Defaults != want {
		t.Errorf("defaults %+v, core's are %+v", in.Defaults, want)
	}
	if !reflect.DeepEqual(in.Sliders, wire.Sliders) {
		t.Errorf("sliders %+v, want %+v", in.Sliders, wire.Sliders)
	}
	if err := coreParams(in.Defaults).Validate(); err != nil {
		t.Error(err)
	}
}

func TestGridMatchesCore(t *testing.T) {
	e, rc, m := loaded(t, "tiny")
	for _, method := range []string{"hae-ols", "topk", "streaming", "quant"} {
		for _, ratio := range []float64{0.2, 0.5} {
			rc.out = nil
			p := defParams
			p.Ratio = ratio
			e.Handle(wire.Request{ID: 2, Op: wire.OpGrid, Method: method, Params: p}, nil, rc.emit, nil)
			r := rc.last()
			if r.Error != "" || !r.Done || r.Grid == nil {
				t.Fatalf("%s %v: %+v", method, ratio, r)
			}
			native, err := m.Grid(method, coreParams(p), 1)
			if r.Grid.NA != "" {
				if err == nil {
					t.Errorf("%s %v: NA %q but core gives numbers", method, ratio, r.Grid.NA)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s %v: core: %v", method, ratio, err)
			}
			var cells []core.Metrics
			for _, s := range rc.out {
				cells = append(cells, s.r.Grid.Cells...)
			}
			if len(cells) != len(native) {
				t.Fatalf("%s %v: %d cells, want %d", method, ratio, len(cells), len(native))
			}
			for _, c := range cells {
				want := native[c.Layer*m.Sample.H+c.Head]
				if c.Err != want.Err || c.Cos != want.Cos || c.Ratio != want.Ratio || c.Profile != nil {
					t.Errorf("%s %v L%d H%d: err %v cos %v ratio %v, core %v %v %v", method, ratio, c.Layer, c.Head, c.Err, c.Cos, c.Ratio, want.Err, want.Cos, want.Ratio)
				}
			}
			if float64(r.Grid.MeanErr) != core.MeanErr(native) {
				t.Errorf("%s %v: mean %v, core %v", method, ratio, r.Grid.MeanErr, core.MeanErr(native))
			}
		}
	}
}

func TestHeadMaps(t *testing.T) {
	e, rc, m := loaded(t, "tiny")
	e.Handle(wire.Request{ID: 3, Op: wire.OpHead, Method: "hae-ols", Params: defParams, Layer: 0, Head: 1, Maps: true}, nil, rc.emit, nil)
	s := rc.out[len(rc.out)-1]
	h := s.r.Head
	if s.r.Error != "" || h == nil || !s.r.Done {
		t.Fatalf("head: %+v", s.r)
	}
	// The numbers came first, in a partial answer without the maps.
	if len(rc.out) < 2 {
		t.Fatalf("%d answers, want the numbers before the maps", len(rc.out))
	}
	if n := rc.out[len(rc.out)-2]; n.r.ID != 3 || n.r.Done || n.r.Head == nil || len(n.bufs) != 0 ||
		n.r.Head.Metrics.Err != h.Metrics.Err || n.r.Head.Stages != h.Stages || n.r.Head.Maps != nil || !slices.Equal(n.r.Head.Metrics.Profile, h.Metrics.Profile) {
		t.Errorf("partial answer %+v (%d buffers), want the final one's numbers without maps", n.r, len(n.bufs))
	}
	met, c, err := m.Run("hae-ols", coreParams(defParams), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h.Metrics, met) || h.Stages != c.Stages || h.BudgetBits != c.Budget.Bits() || h.FullBits != c.Budget.FullBits {
		t.Errorf("head %+v, stages %+v, bits %d of %d; core %+v, %+v, %d of %d", h.Metrics, h.Stages, h.BudgetBits, h.FullBits, met, c.Stages, c.Budget.Bits(), c.Budget.FullBits)
	}
	g, hi, _ := m.Head(0, 1)
	am := g.Maps(c, hi)
	mp := h.Maps
	if mp == nil || h.MapsDirect {
		t.Fatalf("final answer: maps %+v direct %v, want the message with the answer", mp, h.MapsDirect)
	}
	if mp.Rows != am.Rows || mp.Cols != am.Cols || mp.Calib != am.Calib {
		t.Fatalf("geometry %dx%d/%d, core %dx%d/%d", mp.Rows, mp.Cols, mp.Calib, am.Rows, am.Cols, am.Calib)
	}
	if mp.Title != wire.HeadTitle(0, 1) || mp.Method != "hae-ols" || mp.Ratio != defParams.Ratio || float64(mp.Err) != h.Metrics.Err || mp.Panel != "all" || mp.Seq != 3 ||
		!slices.Equal(mp.TokenText, e.Info().TokenText) || !slices.Equal(mp.Needles, e.Info().Needles) {
		t.Errorf("maps message %+v", mp)
	}
	if got := math.Float32frombits(binary.LittleEndian.Uint32(s.bufs["orig"][4*5:])); got != am.Orig[5] {
		t.Errorf("orig[5] = %v, want %v", got, am.Orig[5])
	}
	for name, want := range map[string]int{"orig": 4 * am.Rows * am.Cols, "comp": 0, "classes": am.Cols, "segments": 4 * am.Cols} {
		if len(s.bufs[name]) != want {
			t.Errorf("buffer %s: %d bytes, want %d", name, len(s.bufs[name]), want)
		}
	}
	// The compressed map came factored: expanded with the original map
	// it is the core's, bit for bit.
	if !mp.Factored || mp.Syn != c.C {
		t.Fatalf("maps message: factored %v with %d synthetic tokens, want true and %d", mp.Factored, mp.Syn, c.C)
	}
	f, err := heatmap.DecodeFactored(*mp, s.bufs["scale"], s.bufs["inv"], s.bufs["syn"], s.bufs["share"], s.bufs["source"])
	if err != nil {
		t.Fatal(err)
	}
	comp := make([]float32, am.Rows*am.Cols)
	f.Expand(comp, am.Orig)
	for i, x := range comp {
		if math.Float32bits(x) != math.Float32bits(am.Comp[i]) {
			t.Fatalf("compressed map cell %d: expanded %v, core %v", i, x, am.Comp[i])
		}
	}
	for j, cl := range c.Class {
		if s.bufs["classes"][j] != byte(cl) || int32(binary.LittleEndian.Uint32(s.bufs["segments"][4*j:])) != c.Segment[j] {
			t.Fatalf("class/segment %d differ", j)
		}
	}
}

// TestHeadMapsAttnOnly checks the maps of an attention-only sample, whose
// compressed map has no factored form: it comes whole, as "comp", equal
// to the core's.
func TestHeadMapsAttnOnly(t *testing.T) {
	raw, err := os.ReadFile("../../core/sample/testdata/interop/attn_f64.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{}
	rc := &recorder{t: t}
	e.Handle(wire.Request{ID: 1, Op: wire.OpLoad, Source: &wire.Source{Kind: "file", Name: "attn_f64.safetensors"}}, map[string][]byte{"file": raw}, rc.emit, nil)
	if r := rc.last(); r.Error != "" || !r.Done {
		t.Fatalf("load: %+v", r)
	}
	e.Handle(wire.Request{ID: 2, Op: wire.OpHead, Method: "topk", Params: defParams, Layer: 0, Head: 0, Maps: true}, nil, rc.emit, nil)
	s := rc.out[len(rc.out)-1]
	if s.r.Error != "" || s.r.Head == nil || s.r.Head.Maps == nil {
		t.Fatalf("head: %+v", s.r)
	}
	mp := s.r.Head.Maps
	if mp.Factored || len(s.bufs["scale"]) != 0 || len(s.bufs["comp"]) != 4*mp.Rows*mp.Cols {
		t.Fatalf("maps message %+v with %d comp bytes, want the whole map", mp, len(s.bufs["comp"]))
	}
	g, hi, err := e.model.Head(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.Compress("topk", coreParams(defParams))
	if err != nil {
		t.Fatal(err)
	}
	am := g.Maps(c, hi)
	for i, x := range am.Comp {
		if got := math.Float32frombits(binary.LittleEndian.Uint32(s.bufs["comp"][4*i:])); math.Float32bits(got) != math.Float32bits(x) {
			t.Fatalf("comp[%d] = %v, core %v", i, got, x)
		}
	}
	// Relayed to a heatmap page, its maps go as asked, but no ladder maps:
	// each would be the whole map.
	k := &sink{}
	e.Maps = k
	e.Handle(wire.Request{ID: 3, Op: wire.OpHead, Method: "topk", Params: defParams, Layer: 0, Head: 0, Maps: true, Direct: true}, nil, rc.emit, nil)
	if len(k.sent) != 1 || k.sent[0].m.Factored {
		t.Fatalf("%d maps relayed, want the whole map once", len(k.sent))
	}
	for e.Climb(0) {
	}
	if len(k.sent) != 1 {
		t.Errorf("%d ladder maps sent for an attention-only sample", len(k.sent)-1)
	}
}

// sink is a MapsSink that records what it is sent, holding keys and views
// as the heatmap page does; maxBytes, when set, bounds the bytes of the
// ladder maps of a focus it takes.
type sink struct {
	held     wire.Recent[struct{}]
	ladder   wire.Ladder[struct{}]
	sent     []sinkMsg
	down     bool // refuses to send
	maxBytes int
	bytes    int
	full     bool
}

type sinkMsg struct {
	m    wire.Maps
	key  string
	bufs map[string][]byte
}

func (k *sink) Ready() bool { return !k.down }

// reset is the heatmap page restarting.
func (k *sink) reset() {
	k.held.Reset()
	k.ladder.Reset()
}

func (k *sink) Holds(key string) bool {
	_, ok := k.held.Get(key)
	return ok && !k.down
}

func (k *sink) HoldsView(view string) bool {
	_, ok := k.ladder.Get(view)
	return ok && !k.down
}

func (k *sink) LadderFull(view string) bool {
	return (k.ladder.Full() || k.full) && k.ladder.Prefix() == wire.ViewPrefix(view)
}

func (k *sink) Send(m wire.Maps, key string, bufs map[string][]byte) bool {
	if k.down {
		return false
	}
	if wire.ViewPrefix(m.View) != k.ladder.Prefix() {
		k.bytes, k.full = 0, false
	}
	size := bufsSize(bufs)
	if k.maxBytes > 0 && m.Ladder && k.bytes+size > k.maxBytes {
		k.full = true
		if m.Ladder {
			return false
		}
	} else if k.ladder.Put(m.View, struct{}{}, size) {
		if m.Ladder {
			k.bytes += size
		}
	} else if m.Ladder {
		return false
	}
	if _, ok := bufs["orig"]; ok {
		k.held.Put(key, struct{}{})
	}
	k.sent = append(k.sent, sinkMsg{m, key, bufs})
	return true
}

// TestHeadMapsDirect: Direct maps go to the sink before the answer, the
// unchanging part (original map, token texts, needles) once per head and
// model; without a sink that takes them, or without Direct, they come with
// the final answer, after a partial one with the numbers.
func TestHeadMapsDirect(t *testing.T) {
	e, rc, _ := loaded(t, "tiny")
	k := &sink{}
	e.Maps = k
	id := 10
	head := func(layer, h int, ratio float64, direct bool) *wire.HeadResult {
		id++
		p := defParams
		p.Ratio = ratio
		e.Handle(wire.Request{ID: id, Op: wire.OpHead, Method: "hae-ols", Params: p, Layer: layer, Head: h, Maps: true, Direct: direct, Panel: "comp"}, nil, rc.emit, nil)
		r := rc.last()
		if r.Error != "" || r.Head == nil || !r.Done {
			t.Fatalf("head %d/%d: %+v", layer, h, r)
		}
		return r.Head
	}
	steps := []struct {
		layer, head int
		ratio       float64
		direct      bool
		down        bool
		static      bool // the orig buffer, token texts and needles go along
		newModel    bool // a load before this step
	}{
		{0, 1, 0.3, true, false, true, false},
		{0, 1, 0.2, true, false, false, false},
		{0, 0, 0.2, true, false, true, false},
		{0, 1, 0.4, true, false, false, false}, // still held
		{0, 1, 0.4, false, false, true, false}, // not direct: with the answer
		{0, 1, 0.5, true, true, true, false},   // the sink refuses: with the answer
		{0, 1, 0.5, true, false, true, true},   // a new model: new keys
	}
	for i, st := range steps {
		if st.newModel {
			e.Handle(wire.Request{ID: 99, Op: wire.OpLoad, Source: &wire.Source{Kind: "preset", Preset: "tiny"}}, nil, rc.emit, nil)
		}
		k.down = st.down
		n, answers := len(k.sent), len(rc.out)
		hr := head(st.layer, st.head, st.ratio, st.direct)
		// Direct maps go first and one answer follows; otherwise the
		// numbers come first in a partial answer.
		if want := map[bool]int{true: 1, false: 2}[st.direct && !st.down]; len(rc.out)-answers != want {
			t.Errorf("step %d: %d answers, want %d", i, len(rc.out)-answers, want)
		}
		var m wire.Maps
		var bufs map[string][]byte
		if st.direct && !st.down {
			if !hr.MapsDirect || hr.Maps != nil || len(k.sent) != n+1 || len(rc.out[len(rc.out)-1].bufs) != 0 {
				t.Fatalf("step %d: direct %v maps %v, %d sent, %d buffers with the answer", i, hr.MapsDirect, hr.Maps, len(k.sent)-n, len(rc.out[len(rc.out)-1].bufs))
			}
			s := k.sent[n]
			m, bufs = s.m, s.bufs
			if want := e.mapsKey(st.layer, st.head); s.key != want {
				t.Errorf("step %d: key %q, want %q", i, s.key, want)
			}
		} else {
			if hr.MapsDirect || hr.Maps == nil || len(k.sent) != n {
				t.Fatalf("step %d: direct %v maps %v, %d sent", i, hr.MapsDirect, hr.Maps, len(k.sent)-n)
			}
			m, bufs = *hr.Maps, rc.out[len(rc.out)-1].bufs
		}
		_, hasOrig := bufs["orig"]
		if hasOrig != st.static || (len(m.TokenText) > 0) != st.static {
			t.Errorf("step %d: orig %v, %d token texts; want the unchanging part %v", i, hasOrig, len(m.TokenText), st.static)
		}
		if m.Seq != id || m.Panel != "comp" || m.Ratio != st.ratio || m.Title != wire.HeadTitle(st.layer, st.head) || !m.Factored || len(bufs["scale"]) != 4*m.Rows || len(bufs["source"]) != 4*m.Cols {
			t.Errorf("step %d: message %+v with %d scale and %d source bytes", i, m, len(bufs["scale"]), len(bufs["source"]))
		}
	}
}

func TestCurve(t *testing.T) {
	e, rc, m := loaded(t, "tiny")
	ratios := []float64{0.1, 0.3, 0.6}
	methods := []string{"hae-ols", "quant"}
	for _, head := range []int{1, -1} {
		e.Handle(wire.Request{ID: 4, Op: wire.OpCurve, Methods: methods, Ratios: ratios, Params: defParams, Layer: 0, Head: head}, nil, rc.emit, nil)
		cv := rc.last().Curve
		if cv == nil {
			t.Fatalf("head %d: %+v", head, rc.last())
		}
		for mi, method := range methods {
			for ri, r := range ratios {
				p := coreParams(defParams)
				p.Ratio = r
				want := math.NaN()
				if head >= 0 {
					if met, _, err := m.Run(method, p, 0, head); err == nil {
						want = met.Err
					}
				} else if ms, err := m.Grid(method, p, 1); err == nil {
					want = core.MeanErr(ms)
				}
				got := float64(cv.Err[mi][ri])
				if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
					t.Errorf("head %d %s at %v: %v, want %v", head, method, r, got, want)
				}
			}
		}
	}
}

func safetensorsOf(t *testing.T, preset string) []byte {
	t.Helper()
	cfg, _ := gen.DefaultConfig(preset)
	return safetensorsOfConfig(t, cfg)
}

// safetensorsOfConfig is the sample cfg generates, as an F32 safetensors
// file.
func safetensorsOfConfig(t *testing.T, cfg gen.Config) []byte {
	t.Helper()
	s, err := gen.Generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := sample.WriteSafetensors(&b, s, "F32"); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestLoadErrors(t *testing.T) {
	good := safetensorsOf(t, "tiny")
	tests := []struct {
		name string
		req  wire.Request
		bufs map[string][]byte
		want string // substring of the error; "" for success
	}{
		{"file ok", wire.Request{Op: wire.OpLoad, Source: &wire.Source{Kind: "file", Name: "tiny.safetensors"}}, map[string][]byte{"file": good}, ""},
		{"broken file", wire.Request{Op: wire.OpLoad, Source: &wire.Source{Kind: "file", Name: "broken.safetensors"}}, map[string][]byte{"file": good[:100]}, "broken.safetensors"},
		{"no buffer", wire.Request{Op: wire.OpLoad, Source: &wire.Source{Kind: "file", Name: "x.npy"}}, nil, "no buffer"},
		{"not a checkpoint", wire.Request{Op: wire.OpLoad, Source: &wire.Source{Kind: "llama", Name: "model.bin"}}, map[string][]byte{"file": []byte("hello, this is no checkpoint at all")}, "model.bin"},
		{"unknown preset", wire.Request{Op: wire.OpLoad, Source: &wire.Source{Kind: "preset", Preset: "nope"}}, nil, "nope"},
		{"absolute url", wire.Request{Op: wire.OpLoad, Source: &wire.Source{Kind: "url", URL: "https://example.com/x.safetensors"}}, nil, "relative"},
		{"rooted url", wire.Request{Op: wire.OpLoad, Source: &wire.Source{Kind: "url", URL: "//example.com/x"}}, nil, "relative"},
		{"no source", wire.Request{Op: wire.OpLoad}, nil, "no source"},
		{"bad kind", wire.Request{Op: wire.OpLoad, Source: &wire.Source{Kind: "ftp"}}, nil, "ftp"},
		{"unknown op", wire.Request{Op: "dance"}, nil, "dance"},
		{"unknown method", wire.Request{Op: wire.OpGrid, Method: "magic", Params: defParams}, nil, "magic"},
		{"bad ratio", wire.Request{Op: wire.OpHead, Method: "topk", Params: wire.Params{Ratio: 2, Tau: 1}}, nil, "ratio"},
		{"bad head", wire.Request{Op: wire.OpHead, Method: "topk", Params: defParams, Head: 9}, nil, "head 9"},
	}
	e, rc, _ := loaded(t, "tiny")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rc.out = nil
			e.Handle(tc.req, tc.bufs, rc.emit, nil)
			r := rc.last()
			if tc.want == "" {
				if r.Error != "" {
					t.Fatalf("error %q", r.Error)
				}
			} else if !strings.Contains(r.Error, tc.want) || !r.Done {
				t.Fatalf("error %q, want it to mention %q", r.Error, tc.want)
			}
			// The engine keeps working with what it had.
			rc.out = nil
			e.Handle(wire.Request{Op: wire.OpHead, Method: "hae-ols", Params: defParams}, nil, rc.emit, nil)
			if h := rc.last(); h.Error != "" || h.Head == nil {
				t.Fatalf("head after %s: %+v", tc.name, h)
			}
		})
	}
}

func TestNotLoaded(t *testing.T) {
	rc := &recorder{t: t}
	(&Engine{}).Handle(wire.Request{Op: wire.OpGrid, Method: "topk", Params: defParams}, nil, rc.emit, nil)
	if !strings.Contains(rc.last().Error, "no sample loaded") {
		t.Fatalf("error %q", rc.last().Error)
	}
}

func TestQueue(t *testing.T) {
	req := func(id int, op string) wire.Request { return wire.Request{ID: id, Op: op} }
	tests := []struct {
		name string
		push []wire.Request
		want []int // ids in the order Next returns them
	}{
		{"head overtakes grid", []wire.Request{req(1, "grid"), req(2, "head")}, []int{2, 1}},
		{"newer replaces older", []wire.Request{req(1, "head"), req(2, "grid"), req(3, "head")}, []int{3, 2}},
		{"load is a barrier", []wire.Request{req(1, "grid"), req(2, "load"), req(3, "head")}, []int{1, 2, 3}},
		{"curve before grid", []wire.Request{req(1, "grid"), req(2, "curve")}, []int{2, 1}},
		{"compute is a barrier", []wire.Request{req(1, "grid"), req(2, "compute"), req(3, "head")}, []int{1, 2, 3}},
		{"after load by priority", []wire.Request{req(1, "load"), req(2, "grid"), req(3, "curve"), req(4, "head")}, []int{1, 4, 3, 2}},
		{"stop drops grid and curve", []wire.Request{req(1, "grid"), req(2, "curve"), req(3, "head"), req(4, "stop")}, []int{3, 4}},
		{"grid after stop", []wire.Request{req(1, "stop"), req(2, "grid")}, []int{2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := NewQueue()
			for _, r := range tc.push {
				q.Push(r, nil)
			}
			for _, id := range tc.want {
				if got := q.Next().req.ID; got != id {
					t.Fatalf("got %d, want %d", got, id)
				}
			}
			if _, ok := q.take(func(string) bool { return true }); ok {
				t.Fatal("queue not empty")
			}
		})
	}
}

// TestWorkerInterleaves checks that a head request arriving during a grid
// is answered before the grid's next part, and a newer grid supersedes it.
func TestWorkerInterleaves(t *testing.T) {
	e, _, _ := loaded(t, "default")
	rc := &recorder{t: t}
	q := NewQueue()
	w := &Worker{E: e, Q: q, Emit: rc.emit}
	// The head comes at the grid's first yield, the newer grid at the first
	// yield after the head was answered.
	yields, pushed := 0, false
	w.Yield = func() {
		yields++
		if yields == 1 {
			q.Push(wire.Request{ID: 11, Op: wire.OpHead, Method: "topk", Params: defParams, Layer: 2, Head: 3}, nil)
		}
		if !pushed && slices.ContainsFunc(rc.out, func(a sent) bool { return a.r.ID == 11 }) {
			pushed = true
			q.Push(wire.Request{ID: 12, Op: wire.OpGrid, Method: "topk", Params: defParams}, nil)
		}
	}
	w.run(item{req: wire.Request{ID: 10, Op: wire.OpGrid, Method: "hae-ols", Params: defParams}})
	var ids []int
	for _, s := range rc.out {
		ids = append(ids, s.r.ID)
	}
	want := []int{10, 11, 10}
	if len(ids) != len(want) || ids[0] != 10 || ids[1] != 11 || ids[2] != 10 || rc.out[2].r.Done {
		t.Fatalf("answers %v (last done %v), want %v then stop (superseded)", ids, rc.last().Done, want)
	}
	if it := q.Next(); it.req.ID != 12 {
		t.Fatalf("queued %d, want 12", it.req.ID)
	}
}

// TestClimb: after a head request Climb compresses every ratio slider
// step of the focused KV head, one per call, nearest first (the side of
// the last move first), and nothing else; a new head request restarts it
// from the new step.
func TestClimb(t *testing.T) {
	e, rc, _ := loaded(t, "tiny")
	if e.Climb(0) {
		t.Fatal("Climb with nothing in focus did work")
	}
	cached := func() map[float64]bool {
		out := map[float64]bool{}
		for k := range e.caches {
			out[k.params.Ratio] = true
		}
		return out
	}
	p := defParams
	e.Handle(wire.Request{Op: wire.OpHead, Method: "hae-ols", Params: p, Layer: 0, Head: 1}, nil, rc.emit, nil)
	var order []float64
	for {
		before := cached()
		if !e.Climb(0) {
			break
		}
		var made []float64
		for r := range cached() {
			if !before[r] {
				made = append(made, r)
			}
		}
		if len(made) != 1 {
			t.Fatalf("one Climb made %v, want one step", made)
		}
		order = append(order, made[0])
	}
	steps := wire.RatioStep(wire.RatioSlider.Max) - wire.RatioStep(wire.RatioSlider.Min) + 1
	if len(order) != steps-1 || len(e.caches) != steps {
		t.Fatalf("climbed %d steps (%d caches), want %d", len(order), len(e.caches), steps-1)
	}
	if want := []float64{0.31, 0.29, 0.32, 0.28}; !slices.Equal(order[:4], want) {
		t.Errorf("climbed %v first, want %v", order[:4], want)
	}
	// As a slider gives them.
	for k := wire.RatioStep(wire.RatioSlider.Min); k <= wire.RatioStep(wire.RatioSlider.Max); k++ {
		pp := p
		pp.Ratio = float64(k) / 100
		if _, ok := e.caches[cacheKey{0, 0, "hae-ols", coreParams(pp)}]; !ok {
			t.Errorf("ratio %v not compressed", pp.Ratio)
		}
	}
	// Another lambda is another focus; after a move down the ladder
	// climbs down first.
	p.Lambda, p.Ratio = 0.4, 0.5
	e.Handle(wire.Request{Op: wire.OpHead, Method: "hae-ols", Params: p, Layer: 0, Head: 1}, nil, rc.emit, nil)
	e.Climb(0)
	p.Ratio = 0.45
	e.Handle(wire.Request{Op: wire.OpHead, Method: "hae-ols", Params: p, Layer: 0, Head: 1}, nil, rc.emit, nil)
	has := func(r float64) bool {
		pp := p
		pp.Ratio = r
		_, ok := e.caches[cacheKey{0, 0, "hae-ols", coreParams(pp)}]
		return ok
	}
	if !has(0.51) {
		t.Error("the first Climb after 0.5 did not make 0.51")
	}
	for _, r := range []float64{0.44, 0.46, 0.43} {
		e.Climb(0)
		if !has(r) {
			t.Fatalf("after a move down to 0.45: %v not climbed next", r)
		}
	}
	if has(0.47) {
		t.Error("0.47 climbed before 0.43")
	}
}

// TestClimbReach: with a reach, Climb makes only the steps that near the
// focus.
func TestClimbReach(t *testing.T) {
	e, rc, _ := loaded(t, "tiny")
	e.Handle(wire.Request{Op: wire.OpHead, Method: "hae-ols", Params: defParams, Layer: 0, Head: 1}, nil, rc.emit, nil)
	n := 0
	for e.Climb(ScrubReach) {
		n++
	}
	var got []float64
	for k := range e.caches {
		got = append(got, k.params.Ratio)
	}
	slices.Sort(got)
	if want := []float64{0.28, 0.29, 0.3, 0.31, 0.32}; n != 4 || !slices.Equal(got, want) {
		t.Errorf("%d climbs made %v, want 4 making %v", n, got, want)
	}
}

// TestLadderSteps: the slider's steps from one, nearest first, the side
// of the last move first, within the slider's range.
func TestLadderSteps(t *testing.T) {
	for _, tc := range []struct {
		step, dir int
		first     []int
	}{
		{30, 0, []int{30, 31, 29, 32, 28}},
		{30, -1, []int{30, 29, 31, 28, 32}},
		{2, 1, []int{2, 3, 4, 5}},
		{100, 1, []int{100, 99, 98}},
	} {
		got := ladderSteps(tc.step, tc.dir)
		if len(got) != 99 || !slices.Equal(got[:len(tc.first)], tc.first) {
			t.Errorf("from %d (dir %d): %d steps starting %v, want 99 starting %v", tc.step, tc.dir, len(got), got[:min(len(got), 6)], tc.first)
		}
	}
}

// TestLoadLlama captures a small random llama2.c checkpoint in the worker
// and checks the sample's shape and that the grid runs on it.
func TestLoadLlama(t *testing.T) {
	m, err := llama.Random(llama.Config{Dim: 32, HiddenDim: 64, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 64, SeqLen: 96, SharedClassifier: true}, 7)
	if err != nil {
		t.Fatal(err)
	}
	ckpt, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tokens, wantN int
	}{{0, 96}, {80, 80}, {500, 96}}
	for _, tc := range tests {
		e := &Engine{}
		rc := &recorder{t: t}
		e.Handle(wire.Request{Op: wire.OpLoad, Source: &wire.Source{Kind: "llama", Name: "rand.bin", Tokens: tc.tokens}}, map[string][]byte{"file": ckpt}, rc.emit, nil)
		r := rc.last()
		if r.Error != "" || r.Info == nil {
			t.Fatalf("tokens %d: %+v", tc.tokens, r)
		}
		if r.Info.Tokens != tc.wantN || r.Info.Layers != 2 || r.Info.Heads != 4 || r.Info.KVHeads != 2 || len(rc.out) < 3 {
			t.Errorf("tokens %d: info %+v after %d answers, want N=%d and progress answers", tc.tokens, r.Info, len(rc.out), tc.wantN)
		}
		rc.out = nil
		e.Handle(wire.Request{Op: wire.OpGrid, Method: "hae-ols", Params: defParams}, nil, rc.emit, nil)
		if g := rc.last(); g.Error != "" || !g.Done || len(rc.out) != 4 {
			t.Errorf("grid on the capture: %d answers, last %+v", len(rc.out), g)
		}
	}
}

func TestLoadURL(t *testing.T) {
	good := safetensorsOf(t, "tiny")
	// Each file fetched is handed back once the Pool is done with it
	// (in the browser, its ArrayBuffer is forgotten then).
	handed := 0
	pool := &Pool{N: 1, MinBytes: 1 << 30, Handed: func(b []byte) {
		if &b[0] != &good[0] {
			t.Error("Handed a file that was not fetched")
		}
		handed++
	}}
	e := &Engine{Pool: pool, Fetch: func(url string) ([]byte, error) {
		if url == "samples/tiny.safetensors" || url == "models/tiny.bin" {
			return good, nil
		}
		return nil, errors.New("HTTP 404 Not Found")
	}}
	tests := []struct{ url, want string }{
		{"samples/tiny.safetensors", ""},
		{"samples/missing.safetensors", "samples/missing.safetensors: HTTP 404"},
		{"http://127.0.0.1/samples/tiny.safetensors", "relative"},
	}
	for _, tc := range tests {
		rc := &recorder{t: t}
		e.Handle(wire.Request{Op: wire.OpLoad, Source: &wire.Source{Kind: "url", URL: tc.url}}, nil, rc.emit, nil)
		r := rc.last()
		switch {
		case tc.want == "" && (r.Error != "" || r.Info == nil || r.Info.Name != "tiny.safetensors"):
			t.Errorf("%s: %+v", tc.url, r)
		case tc.want != "" && !strings.Contains(r.Error, tc.want):
			t.Errorf("%s: error %q, want %q", tc.url, r.Error, tc.want)
		}
	}
	if _, _, err := e.fetchLocal("models/tiny.bin"); err != nil {
		t.Fatal(err)
	}
	if handed != 2 {
		t.Errorf("Handed %d times for a sample and a model fetched, want 2", handed)
	}
}

// TestLoop runs the worker loop: queued requests are answered (a head
// before the grid queued ahead of it), and the idle worker then climbs the
// ladder without holding up a later request.
func TestLoop(t *testing.T) {
	q := NewQueue()
	answers := make(chan wire.Response, 100)
	climbed := make(chan struct{}, 100)
	w := &Worker{E: &Engine{}, Q: q, Emit: func(r wire.Response, _ map[string][]byte) {
		switch {
		case r.Op == wire.OpLadderDone:
			climbed <- struct{}{}
		case r.Done:
			answers <- r
		}
	}}
	q.Push(wire.Request{ID: 1, Op: wire.OpLoad, Source: &wire.Source{Kind: "preset", Preset: "tiny"}}, nil)
	q.Push(wire.Request{ID: 2, Op: wire.OpGrid, Method: "hae-ols", Params: defParams}, nil)
	q.Push(wire.Request{ID: 3, Op: wire.OpHead, Method: "hae-ols", Params: defParams, Head: 1}, nil)
	go w.Loop()
	next := func() wire.Response {
		select {
		case r := <-answers:
			return r
		case <-time.After(20 * time.Second):
			t.Fatal("no answer in 20 s")
		}
		return wire.Response{}
	}
	for _, id := range []int{1, 3, 2} {
		if r := next(); r.ID != id || r.Error != "" || r.ComputeMs <= 0 {
			t.Fatalf("answer %+v, want id %d", r, id)
		}
	}
	// Idle, the loop climbs every slider step of the focused KV head and
	// says when it is done.
	select {
	case <-climbed:
	case <-time.After(20 * time.Second):
		t.Fatal("no ladder-done message in 20 s")
	}
	p := defParams
	p.Ratio = 0.31
	q.Push(wire.Request{ID: 4, Op: wire.OpHead, Method: "hae-ols", Params: p, Head: 1}, nil)
	if r := next(); r.ID != 4 || r.Head == nil {
		t.Fatalf("answer %+v, want head 4", r)
	}
}

func TestDeferHeavy(t *testing.T) {
	q := NewQueue()
	q.Push(wire.Request{Op: wire.OpGrid}, nil)
	if d := q.deferHeavy(); d != 0 {
		t.Fatalf("grid held back %v with no head asked", d)
	}
	q.Push(wire.Request{Op: wire.OpHead}, nil)
	if d := q.deferHeavy(); d <= 0 || d > HeavyDefer {
		t.Fatalf("after a head: hold back %v, want (0, %v]", d, HeavyDefer)
	}
	time.Sleep(HeavyDefer)
	if d := q.deferHeavy(); d != 0 {
		t.Fatalf("after %v: still holding back %v", HeavyDefer, d)
	}
}

// TestComputeFallback asks for the GPU where there is none: the engine
// stays on the CPU, says why, and keeps answering with the CPU's numbers.
func TestComputeFallback(t *testing.T) {
	e, rc, m := loaded(t, "tiny")
	for _, open := range []func(bool) (core.Accelerator, wire.Compute, error){
		nil,
		func(bool) (core.Accelerator, wire.Compute, error) {
			return nil, wire.Compute{}, errors.New("no WebGPU adapter")
		},
	} {
		e.OpenGPU, e.gpuAny, e.gpuHW = open, gpuTry{}, gpuTry{}
		e.Handle(wire.Request{ID: 3, Op: wire.OpCompute, Compute: "gpu"}, nil, rc.emit, nil)
		r := rc.last()
		if r.Error != "" || r.Compute == nil || r.Compute.Device != "cpu" || !strings.Contains(r.Compute.Note, "computing on the CPU") {
			t.Fatalf("compute gpu without a GPU: %+v %+v", r, r.Compute)
		}
	}
	e.Handle(wire.Request{ID: 4, Op: wire.OpGrid, Method: "topk", Params: defParams}, nil, rc.emit, nil)
	native, err := m.Grid("topk", coreParams(defParams), 1)
	if err != nil {
		t.Fatal(err)
	}
	if r := rc.last(); r.Grid == nil || float64(r.Grid.MeanErr) != core.MeanErr(native) {
		t.Errorf("grid after the fallback: %+v, want mean %v", r.Grid, core.MeanErr(native))
	}
	e.Handle(wire.Request{ID: 5, Op: wire.OpCompute, Compute: "tpu"}, nil, rc.emit, nil)
	if r := rc.last(); !strings.Contains(r.Error, "unknown device") {
		t.Errorf("compute tpu: %+v", r)
	}
}

// fakeAccel is an Accelerator computing with the CPU kernels, counting
// calls: it shows that the engine routes the analysis through the device it
// was given.
type fakeAccel struct{ calls int }

func (f *fakeAccel) Calibrate(st *kernel.Stats, q []float32, m int, k, v []float32, n, d int, scale float32) error {
	f.calls++
	kernel.Calibrate(st, q, m, k, v, n, d, scale)
	return nil
}

func (f *fakeAccel) Logits(dst, q []float32, m int, k []float32, n, d int, scale float32, bias []float32) error {
	f.calls++
	kernel.Logits(dst, q, m, k, n, d, scale)
	return nil
}

func (f *fakeAccel) Attend(out, q []float32, m int, keys, vals []float32, c, d int, scale float32, bias []float32, base int, causal bool) error {
	f.calls++
	for i := 0; i < m; i++ {
		cnt := c
		if causal {
			cnt = min(c, base+i+1)
		}
		var b []float32
		if bias != nil {
			b = bias[:cnt]
		}
		p := kernel.NewPartial(1, d)
		p.AddKeys(q[i*d:(i+1)*d], keys, vals, cnt, scale, b, false, nil)
		p.Output(out[i*d : (i+1)*d])
	}
	return nil
}

func (f *fakeAccel) BinMass(z, y, a []float32, m, n int, idx []int32, v []float32, d int) error {
	f.calls++
	kernel.BinMass(z, y, a, m, n, idx, v, d)
	return nil
}

func (f *fakeAccel) Features(out, q []float32, m int, k []float32, ns, d int, scale float32, mu []float32) error {
	f.calls++
	s := make([]float32, m*ns)
	kernel.Logits(s, q, m, k, ns, d, scale)
	for i := range out[:m*ns] {
		out[i] = kernel.Exp32(s[i] - mu[i/ns])
	}
	return nil
}

func TestComputeOnDevice(t *testing.T) {
	e, rc, m := loaded(t, "tiny")
	fa := &fakeAccel{}
	e.OpenGPU = func(bool) (core.Accelerator, wire.Compute, error) { return fa, wire.Compute{Adapter: "fake"}, nil }
	e.Handle(wire.Request{ID: 3, Op: wire.OpCompute, Compute: "gpu"}, nil, rc.emit, nil)
	if r := rc.last(); r.Compute == nil || r.Compute.Device != "gpu" || r.Compute.Adapter != "fake" {
		t.Fatalf("compute gpu: %+v", r)
	}
	rc.out = nil
	e.Handle(wire.Request{ID: 4, Op: wire.OpGrid, Method: "hae-ols", Params: defParams}, nil, rc.emit, nil)
	r := rc.last()
	if r.Error != "" || r.Grid == nil || fa.calls == 0 {
		t.Fatalf("grid on the device: %+v, %d device calls", r, fa.calls)
	}
	native, err := m.Grid("hae-ols", coreParams(defParams), 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := float64(r.Grid.MeanErr), core.MeanErr(native); math.Abs(got-want) > 1e-5 {
		t.Errorf("mean err on the device %v, CPU %v", got, want)
	}
	e.Handle(wire.Request{ID: 5, Op: wire.OpCompute, Compute: "cpu"}, nil, rc.emit, nil)
	if r := rc.last(); r.Compute.Device != "cpu" || e.Compute().Device != "cpu" {
		t.Errorf("back to cpu: %+v", r.Compute)
	}
}

// TestComputeAuto: "auto" takes a hardware GPU, refuses a software adapter
// (keeping the CPU, with a note), and shares one opened device with "gpu".
func TestComputeAuto(t *testing.T) {
	e, rc, _ := loaded(t, "tiny")
	opens := 0
	software := true
	fa := &fakeAccel{}
	e.OpenGPU = func(hw bool) (core.Accelerator, wire.Compute, error) {
		opens++
		if hw && software {
			return nil, wire.Compute{}, errors.New("gpu: no GPU available: only a software adapter (SwiftShader)")
		}
		return fa, wire.Compute{Adapter: "fake", Software: software}, nil
	}
	e.Handle(wire.Request{ID: 3, Op: wire.OpCompute, Compute: "auto"}, nil, rc.emit, nil)
	if r := rc.last(); r.Compute == nil || r.Compute.Device != "cpu" || !strings.Contains(r.Compute.Note, "software adapter") {
		t.Fatalf("auto with a software adapter: %+v", r.Compute)
	}
	e.Handle(wire.Request{ID: 4, Op: wire.OpCompute, Compute: "gpu"}, nil, rc.emit, nil)
	if r := rc.last(); r.Compute.Device != "gpu" || !r.Compute.Software {
		t.Fatalf("gpu with a software adapter: %+v", r.Compute)
	}
	// A hardware adapter: auto uses it, and gpu reuses the same device.
	e2, rc2, _ := loaded(t, "tiny")
	software, opens = false, 0
	e2.OpenGPU = e.OpenGPU
	e2.Handle(wire.Request{ID: 3, Op: wire.OpCompute, Compute: "auto"}, nil, rc2.emit, nil)
	if r := rc2.last(); r.Compute.Device != "gpu" || r.Compute.Note != "" {
		t.Fatalf("auto with a hardware adapter: %+v", r.Compute)
	}
	e2.Handle(wire.Request{ID: 4, Op: wire.OpCompute, Compute: "gpu"}, nil, rc2.emit, nil)
	if r := rc2.last(); r.Compute.Device != "gpu" || opens != 1 {
		t.Fatalf("gpu after auto: %+v, %d opens", r.Compute, opens)
	}
}

// TestComputeProbe: Probe opens the GPU in the background once per
// device, a load runs while it does, and the compute request takes its
// outcome (no second OpenGPU); Probe of "cpu" opens nothing.
func TestComputeProbe(t *testing.T) {
	e, rc, _ := loaded(t, "tiny")
	var mu sync.Mutex
	opens := map[bool]int{}
	release := make(chan struct{})
	fa := &fakeAccel{}
	e.OpenGPU = func(hw bool) (core.Accelerator, wire.Compute, error) {
		mu.Lock()
		opens[hw]++
		mu.Unlock()
		<-release // the browser looking for an adapter
		return fa, wire.Compute{Adapter: "fake"}, nil
	}
	e.Probe("cpu")
	e.Probe("auto")
	e.Probe("auto")
	// The load does not wait for the GPU.
	e.Handle(wire.Request{ID: 2, Op: wire.OpLoad, Source: &wire.Source{Kind: "preset", Preset: "tiny"}}, nil, rc.emit, nil)
	if r := rc.last(); r.Op != wire.OpLoad || !r.Done || r.Error != "" {
		t.Fatalf("load while the GPU opens: %+v", r)
	}
	close(release)
	e.Handle(wire.Request{ID: 3, Op: wire.OpCompute, Compute: "auto"}, nil, rc.emit, nil)
	if r := rc.last(); r.Compute == nil || r.Compute.Device != "gpu" || r.Compute.Adapter != "fake" {
		t.Fatalf("auto after the probe: %+v", r.Compute)
	}
	mu.Lock()
	defer mu.Unlock()
	if opens[true] != 1 || opens[false] != 0 {
		t.Errorf("OpenGPU calls %v, want one hardware-only call", opens)
	}
}

// failingAccel fails every call, as a lost GPU does.
type failingAccel struct{ fakeAccel }

func (f *failingAccel) Calibrate(*kernel.Stats, []float32, int, []float32, []float32, int, int, float32) error {
	return errors.New("gpu: device lost")
}

// TestComputeGPUFails: when the device fails, the engine answers on the
// CPU, with the CPU's numbers, and tells the page through a compute answer.
func TestComputeGPUFails(t *testing.T) {
	e, rc, m := loaded(t, "tiny")
	e.OpenGPU = func(bool) (core.Accelerator, wire.Compute, error) {
		return &failingAccel{}, wire.Compute{Adapter: "flaky"}, nil
	}
	e.Handle(wire.Request{ID: 7, Op: wire.OpCompute, Compute: "gpu"}, nil, rc.emit, nil)
	if r := rc.last(); r.Compute.Device != "gpu" {
		t.Fatalf("compute gpu: %+v", r.Compute)
	}
	rc.out = nil
	e.Handle(wire.Request{ID: 8, Op: wire.OpGrid, Method: "topk", Params: defParams}, nil, rc.emit, nil)
	var note *wire.Compute
	var grid *wire.GridPart
	for _, s := range rc.out {
		if s.r.Error != "" {
			t.Fatalf("error answer %q", s.r.Error)
		}
		if s.r.Compute != nil {
			note = s.r.Compute
			if s.r.ID != 7 {
				t.Errorf("the compute note answers request %d, want 7", s.r.ID)
			}
		}
		if s.r.Grid != nil && s.r.Done {
			grid = s.r.Grid
		}
	}
	if note == nil || note.Device != "cpu" || !strings.Contains(note.Note, "device lost") {
		t.Fatalf("compute note after the failure: %+v", note)
	}
	native, err := m.Grid("topk", coreParams(defParams), 1)
	if err != nil {
		t.Fatal(err)
	}
	if grid == nil || float64(grid.MeanErr) != core.MeanErr(native) {
		t.Errorf("grid after the failure %+v, want the CPU's mean %v", grid, core.MeanErr(native))
	}
	// Asking for the GPU again reports the failure instead of retrying.
	e.Handle(wire.Request{ID: 9, Op: wire.OpCompute, Compute: "gpu"}, nil, rc.emit, nil)
	if r := rc.last(); r.Compute.Device != "cpu" || !strings.Contains(r.Compute.Note, "device lost") {
		t.Errorf("compute gpu after a failure: %+v", r.Compute)
	}
}

// TestHeadSuperseded checks that a head request a newer one supersedes
// while its cache is made stops without an answer, keeping the cache.
func TestHeadSuperseded(t *testing.T) {
	e, _, _ := loaded(t, "default")
	rc := &recorder{t: t}
	q := NewQueue()
	w := &Worker{E: e, Q: q, Emit: rc.emit}
	w.Yield = func() {
		if q.Len() == 0 {
			q.Push(wire.Request{ID: 21, Op: wire.OpHead, Method: "hae-ols", Params: defParams, Layer: 1, Head: 2, Maps: true}, nil)
		}
	}
	w.run(item{req: wire.Request{ID: 20, Op: wire.OpHead, Method: "hae-ols", Params: defParams, Layer: 1, Head: 1, Maps: true}})
	if len(rc.out) != 0 {
		t.Fatalf("the superseded head answered: %+v", rc.last())
	}
	if len(e.caches) != 1 {
		t.Fatalf("%d caches kept, want the superseded head's one", len(e.caches))
	}
	if it := q.Next(); it.req.ID != 21 {
		t.Fatalf("queued %d, want 21", it.req.ID)
	}
}

// TestLadderMaps: with the maps relayed to a heatmap page, climbing the
// ladder sends it the focused view's maps at every slider ratio (Ladder,
// no Seq, no unchanging part), each the same message a head request at
// that ratio gets; once per view until the page restarts; never without
// Direct.
func TestLadderMaps(t *testing.T) {
	e, rc, _ := loaded(t, "tiny")
	k := &sink{}
	e.Maps = k
	p := defParams
	req := wire.Request{ID: 5, Op: wire.OpHead, Method: "hae-ols", Params: p, Layer: 0, Head: 1, Maps: true, Direct: true, Panel: "all"}
	e.Handle(req, nil, rc.emit, nil)
	hr := rc.last().Head
	if hr == nil || hr.Model != e.gen || hr.Model == 0 || len(k.sent) != 1 {
		t.Fatalf("head answer %+v, %d maps sent", hr, len(k.sent))
	}
	if want := wire.ViewKey(hr.Model, 0, 1, "hae-ols", p, "all"); k.sent[0].m.View != want || k.sent[0].m.Ladder {
		t.Fatalf("direct maps: view %q ladder %v, want %q and not ladder", k.sent[0].m.View, k.sent[0].m.Ladder, want)
	}
	climb := func() []sinkMsg {
		n := len(k.sent)
		for e.Climb(0) {
		}
		return k.sent[n:]
	}
	sent := climb()
	steps := wire.RatioStep(wire.RatioSlider.Max) - wire.RatioStep(wire.RatioSlider.Min)
	fits := -1 // the head request's step: its maps went with the answer
	for s := 0; s <= steps; s++ {
		pp := p
		pp.Ratio = wire.StepRatio(wire.RatioStep(wire.RatioSlider.Min) + s)
		if ce := e.caches[cacheKey{0, 0, "hae-ols", coreParams(pp)}]; ce != nil && ce.err == nil {
			fits++
		}
	}
	if len(sent) != fits || fits < steps/2 {
		t.Fatalf("%d ladder maps sent, want one per slider ratio that fits but the head's (%d of %d)", len(sent), fits, steps+1)
	}
	seen := map[string]bool{}
	for _, s := range sent {
		m := s.m
		pp := p
		pp.Ratio = m.Ratio
		if !m.Ladder || m.Seq != 0 || m.View != wire.ViewKey(hr.Model, 0, 1, "hae-ols", pp, "all") || s.key != e.mapsKey(0, 1) || seen[m.View] {
			t.Fatalf("ladder message %+v (key %q; seen before %v)", m, s.key, seen[m.View])
		}
		seen[m.View] = true
		if _, ok := s.bufs["orig"]; ok || len(m.TokenText) > 0 {
			t.Errorf("%s: ladder maps carry the unchanging part", m.View)
		}
	}
	// Each is what a head request at its ratio gets.
	for _, s := range []sinkMsg{sent[0], sent[len(sent)/2], sent[len(sent)-1]} {
		pp := p
		pp.Ratio = s.m.Ratio
		e.Handle(wire.Request{ID: 6, Op: wire.OpHead, Method: "hae-ols", Params: pp, Layer: 0, Head: 1, Maps: true, Panel: "all"}, nil, rc.emit, nil)
		r := rc.last().Head
		if r.Maps == nil || r.Maps.Err != s.m.Err || r.Maps.View != s.m.View || r.Maps.Syn != s.m.Syn {
			t.Fatalf("ratio %v: head request's maps %+v, ladder %+v", pp.Ratio, r.Maps, s.m)
		}
		for name, b := range s.bufs {
			if !slices.Equal(b, rc.out[len(rc.out)-1].bufs[name]) {
				t.Errorf("ratio %v: buffer %q differs from the head request's", pp.Ratio, name)
			}
		}
	}
	// A request whose view the page shows from its ladder gets no maps;
	// one that names another view (a page behind on the model), or a view
	// not in the ladder, gets them.
	for i, tc := range []struct {
		ratio float64
		shown func(v string) string
		maps  bool
	}{
		{sent[1].m.Ratio, func(v string) string { return v }, false},
		{sent[1].m.Ratio, func(v string) string { return "" }, true},
		{sent[2].m.Ratio, func(v string) string {
			return strings.Replace(v, fmt.Sprint(hr.Model, "/"), fmt.Sprint(hr.Model+1, "/"), 1)
		}, true},
		{0.305, func(v string) string { return v }, true}, // not a slider position
	} {
		pp := p
		pp.Ratio = tc.ratio
		view := wire.ViewKey(hr.Model, 0, 1, "hae-ols", pp, "all")
		n := len(k.sent)
		e.Handle(wire.Request{ID: 20 + i, Op: wire.OpHead, Method: "hae-ols", Params: pp, Layer: 0, Head: 1, Maps: true, Direct: true, Panel: "all", Shown: tc.shown(view)}, nil, rc.emit, nil)
		r := rc.last().Head
		if got := len(k.sent) - n; !r.MapsDirect || got != map[bool]int{true: 1, false: 0}[tc.maps] {
			t.Errorf("case %d (%s shown as %q): %d maps sent, direct %v; want maps %v", i, view, tc.shown(view), got, r.MapsDirect, tc.maps)
		}
	}
	// Scrubbing the same view: nothing is sent again.
	p.Ratio = 0.5
	e.Handle(wire.Request{ID: 7, Op: wire.OpHead, Method: "hae-ols", Params: p, Layer: 0, Head: 1, Maps: true, Direct: true, Panel: "all"}, nil, rc.emit, nil)
	if again := climb(); len(again) != 0 {
		t.Errorf("%d ladder maps sent again for the same view", len(again))
	}
	// The heatmap page restarts: the next head request sends the
	// unchanging part again, and the ladder's maps follow again.
	k.reset()
	p.Ratio = 0.4
	e.Handle(wire.Request{ID: 8, Op: wire.OpHead, Method: "hae-ols", Params: p, Layer: 0, Head: 1, Maps: true, Direct: true, Panel: "all"}, nil, rc.emit, nil)
	if again := climb(); len(again) != fits {
		t.Errorf("after a restart of the page %d ladder maps sent, want %d", len(again), fits)
	}
	// Another lambda is another focus: its ladder's maps go out too, none
	// of the neighbouring lambdas'.
	p.Lambda = 0.4
	e.Handle(wire.Request{ID: 9, Op: wire.OpHead, Method: "hae-ols", Params: p, Layer: 0, Head: 1, Maps: true, Direct: true, Panel: "all"}, nil, rc.emit, nil)
	for _, s := range climb() {
		if wire.ViewPrefix(s.m.View) != wire.ViewPrefix(wire.ViewKey(hr.Model, 0, 1, "hae-ols", p, "all")) {
			t.Fatalf("ladder maps of another view: %q", s.m.View)
		}
	}
	// Without Direct no ladder maps go.
	p.Lambda = 0.6
	e.Handle(wire.Request{ID: 10, Op: wire.OpHead, Method: "hae-ols", Params: p, Layer: 0, Head: 1, Maps: true, Panel: "all"}, nil, rc.emit, nil)
	if n := len(climb()); n != 0 {
		t.Errorf("%d ladder maps sent for a page that takes them with the answer", n)
	}
}

// TestLadderFull: the ladder's maps for one focus stop when the page's
// ladder is full, and start again for another focus.
func TestLadderFull(t *testing.T) {
	e, rc, _ := loaded(t, "tiny")
	k := &sink{}
	e.Maps = k
	p := defParams
	head := func(id int) {
		e.Handle(wire.Request{ID: id, Op: wire.OpHead, Method: "hae-ols", Params: p, Layer: 0, Head: 1, Maps: true, Direct: true}, nil, rc.emit, nil)
	}
	head(1)
	e.Climb(0)
	if len(k.sent) != 2 || !k.sent[1].m.Ladder {
		t.Fatalf("%d maps sent, want the head's and one ladder step", len(k.sent))
	}
	size := bufsSize(k.sent[1].bufs)
	k.maxBytes = 5*size + size/2 // the ladder maps of the tiny preset are all about this size
	for e.Climb(0) {
	}
	sent := len(k.sent) - 1
	if sent < 4 || sent > 6 || !k.LadderFull(k.sent[1].m.View) {
		t.Errorf("%d ladder maps (full %v); want about 5 within %d bytes", sent, k.LadderFull(k.sent[1].m.View), k.maxBytes)
	}
	n := len(k.sent)
	p.Lambda = 0.4
	head(2)
	for e.Climb(0) {
	}
	if got := len(k.sent) - n - 1; got < 4 || got > 6 {
		t.Errorf("another focus: %d ladder maps, want about 5", got)
	}
}

// TestEvaluateOnce: a kept cache's metrics are computed once per query
// head and are those Evaluate gives; the head answer and the grid use them.
func TestEvaluateOnce(t *testing.T) {
	e, rc, m := loaded(t, "tiny")
	p := defParams
	e.Handle(wire.Request{ID: 2, Op: wire.OpHead, Method: "hae-ols", Params: p, Layer: 0, Head: 1}, nil, rc.emit, nil)
	hr := rc.last().Head
	g, hi, err := e.model.Head(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	k := cacheKey{0, g.KV, "hae-ols", coreParams(p)}
	ce := e.caches[k]
	if ce == nil || len(ce.metrics) != 1 {
		t.Fatalf("cache entry %+v: want the metrics of one head", ce)
	}
	// The same numbers as a fresh analysis of the sample.
	mg, mhi, err := m.Head(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := mg.Compress("hae-ols", coreParams(p))
	if err != nil {
		t.Fatal(err)
	}
	want := mg.Evaluate(c, mhi)
	if !reflect.DeepEqual(ce.metrics[hi], want) || !reflect.DeepEqual(hr.Metrics, want) {
		t.Fatalf("kept metrics %+v, head answer %+v; want %+v", ce.metrics[hi], hr.Metrics, want)
	}
	// Asked again, they come from the entry: a marker in it shows.
	marked := ce.metrics[hi]
	marked.Err = 12345
	ce.metrics[hi] = marked
	e.Handle(wire.Request{ID: 3, Op: wire.OpHead, Method: "hae-ols", Params: p, Layer: 0, Head: 1}, nil, rc.emit, nil)
	if got := rc.last().Head.Metrics.Err; got != 12345 {
		t.Fatalf("second head answer err %v: the kept metrics were not used", got)
	}
}

// byteModel is a small random llama2.c model with byte tokens (0 <unk>, 1
// BOS, 2 EOS, 3+b the byte b) and its tokenizer file's bytes.
func byteModel(t testing.TB) (*llama.Model, []byte, []byte) {
	t.Helper()
	m, err := llama.Random(llama.Config{Dim: 32, HiddenDim: 48, Layers: 2, Heads: 4, KVHeads: 2, Vocab: 259, SeqLen: 320, SharedClassifier: true}, 11)
	if err != nil {
		t.Fatal(err)
	}
	ckpt, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	tb := llama.ByteTokenizerFile()
	return m, ckpt, tb
}

// TestEvalMatchesCore loads a model with its tokenizer and a text prompt,
// and checks the worker's end-to-end answers against core/eval run
// directly on the sequence `haeols eval -text` builds: the same numbers,
// per-position KL, predictions and free-run texts, kept results answered
// again unchanged, and the loaded sample the reference's own capture.
func TestEvalMatchesCore(t *testing.T) {
	m, ckpt, tb := byteModel(t)
	e := &Engine{}
	rc := &recorder{t: t}
	prompt := &wire.Prompt{Text: "The pass key is 123.", Tokens: 120, Gen: 12}
	e.Handle(wire.Request{ID: 1, Op: wire.OpLoad, Source: &wire.Source{Kind: "llama", Name: "bytes.bin", Tokenizer: "bytes.tokenizer.bin", Prompt: prompt}},
		map[string][]byte{"file": ckpt, "tokenizer": tb}, rc.emit, nil)
	r := rc.last()
	if r.Error != "" || r.Info == nil || r.Info.Eval == nil {
		t.Fatalf("load: %+v", r)
	}
	ev := r.Info.Eval
	tok, err := llama.DecodeTokenizer("t", tb, 259)
	if err != nil {
		t.Fatal(err)
	}
	lm := m.Decoder()
	ids, _ := tok.EncodeText(prompt.Text)
	seq := eval.Sequence{Tokens: eval.Continue(lm, append([]int{llama.BOS}, ids...), 120), Gen: 12}
	ref, err := eval.Prepare(lm, seq, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ev.IDs, ref.Seq.Tokens) || ev.Prefix != ref.Seq.Prefix || !slices.Equal(ev.Free, ref.Free) || !slices.Equal(ev.Top, ref.Top) {
		t.Fatalf("the worker's reference differs from eval.Prepare's: prefix %d/%d, free %v/%v", ev.Prefix, ref.Seq.Prefix, ev.Free, ref.Free)
	}
	if got, want := strings.Join(ev.Text, ""), eval.Decode(tok, llama.BOS, ref.Seq.Tokens[1:]); got != want {
		t.Errorf("sequence text %q, want %q", got, want)
	}
	if ev.Prompt.Tokens != 120 || ev.Prompt.Gen != 12 || !ev.Tokenizer || r.Info.Tokens != 120 || r.Info.Prefix != ref.Seq.Prefix {
		t.Errorf("info: %+v, eval prompt %+v", r.Info, ev.Prompt)
	}
	methods := []string{"hae-ols", "topk", "full", "quant"}
	p := wire.Params{Ratio: 0.2, Lambda: core.DefaultLambda, Phi: core.DefaultPhi, Tau: core.DefaultTau}
	for round := 0; round < 2; round++ {
		rc.out = nil
		e.Handle(wire.Request{ID: 2, Op: wire.OpEval, Methods: methods, Params: p}, nil, rc.emit, nil)
		// The first time, the primary method's numbers come first
		// without its free run; kept results come whole.
		want := len(methods)
		if round == 0 {
			want++
		}
		if len(rc.out) != want || !rc.last().Done {
			t.Fatalf("round %d: %d answers for %d methods, last %+v", round, len(rc.out), len(methods), rc.last())
		}
		if round == 0 {
			part, whole := rc.out[0].r, rc.out[1].r
			if part.Done || part.Eval == nil || !part.Eval.FreePending || part.Eval.Diverge != -1 || part.Eval.Free != nil || part.Eval.Method != methods[0] ||
				part.Eval.KL != whole.Eval.KL || !slices.Equal(part.Eval.KLs, whole.Eval.KLs) || whole.Eval.FreePending {
				t.Errorf("the primary method's first answer %+v, then %+v: want its numbers without the free run, then whole", part.Eval, whole.Eval)
			}
			rc.out = rc.out[1:]
		}
		for i, s := range rc.out {
			got := s.r.Eval
			if s.r.Error != "" || got == nil || got.Method != methods[i] || s.r.Done != (i == len(methods)-1) {
				t.Fatalf("answer %d: %+v", i, s.r)
			}
			want, err := ref.Evaluate(methods[i], core.DefaultParams(0.2))
			if err != nil {
				t.Fatal(err)
			}
			if got.NA != want.NA {
				t.Errorf("%s: na %q, want %q", got.Method, got.NA, want.NA)
				continue
			}
			if want.NA != "" {
				continue
			}
			if float64(got.KL) != want.KL || float64(got.Agree) != want.Agree || float64(got.PPLRatio) != want.PPLRatio ||
				float64(got.KLMax) != want.KLMax || float64(got.Used) != want.Used || int(got.Diverge) != want.Diverge || !slices.Equal(got.Top, want.Top) || !slices.Equal(got.Free, want.Free) {
				t.Errorf("%s: got kl %v agree %v ppl %v diverge %d, want %v %v %v %d", got.Method, got.KL, got.Agree, got.PPLRatio, int(got.Diverge), want.KL, want.Agree, want.PPLRatio, want.Diverge)
			}
			for k, x := range want.KLs {
				if float64(got.KLs[k]) != x {
					t.Errorf("%s: kl at %d = %v, want %v", got.Method, k, got.KLs[k], x)
					break
				}
			}
			last := ref.Seq.Tokens[ref.Seq.Prefix-1]
			if txt := strings.Join(got.FreeText, ""); txt != eval.Decode(tok, last, want.Free) {
				t.Errorf("%s: free text %q, want %q", got.Method, txt, eval.Decode(tok, last, want.Free))
			}
			if got.Method == "full" && (got.KL != 0 || int(got.Diverge) != len(ref.Free)) {
				t.Errorf("full: kl %v diverge %d, want 0 and %d", got.KL, int(got.Diverge), len(ref.Free))
			}
		}
	}
	// The per-head views show this run's heads.
	rc.out = nil
	e.Handle(wire.Request{Op: wire.OpGrid, Method: "hae-ols", Params: p}, nil, rc.emit, nil)
	if g := rc.last(); g.Error != "" || !g.Done || len(rc.out) != 4 {
		t.Errorf("grid on the prompt's run: %d answers, last %+v", len(rc.out), g)
	}
	if e.model.Sample != ref.Sample && !slices.Equal(e.model.Sample.K, ref.Sample.K) {
		t.Errorf("the loaded sample is not the reference's capture")
	}
}

// TestPromptOp runs new prompts on the kept model (a pass key with its
// needles marked, a copy), and checks what is refused: a prompt without a
// model, a text prompt without a tokenizer, a bad prompt (the loaded run
// stays), and an eval of a sample that is not a model's run.
func TestPromptOp(t *testing.T) {
	_, ckpt, tb := byteModel(t)
	e := &Engine{}
	rc := &recorder{t: t}
	e.Handle(wire.Request{Op: wire.OpPrompt, Prompt: &wire.Prompt{}}, nil, rc.emit, nil)
	if r := rc.last(); !strings.Contains(r.Error, "no sample loaded") {
		t.Errorf("prompt before any load: %+v", r)
	}
	e.Handle(wire.Request{Op: wire.OpLoad, Source: &wire.Source{Kind: "preset", Preset: "tiny"}}, nil, rc.emit, nil)
	e.Handle(wire.Request{Op: wire.OpEval, Methods: []string{"topk"}, Params: defParams}, nil, rc.emit, nil)
	if r := rc.last(); !strings.Contains(r.Error, "not a model's run") {
		t.Errorf("eval of a preset: %+v", r)
	}
	e.Handle(wire.Request{Op: wire.OpPrompt, Prompt: &wire.Prompt{}}, nil, rc.emit, nil)
	if r := rc.last(); !strings.Contains(r.Error, "no model loaded") {
		t.Errorf("prompt without a model: %+v", r)
	}
	// Without a tokenizer: ids only.
	e.Handle(wire.Request{Op: wire.OpLoad, Source: &wire.Source{Kind: "llama", Name: "ids.bin", Prompt: &wire.Prompt{Tokens: 64, Gen: 4}}}, map[string][]byte{"file": ckpt}, rc.emit, nil)
	if r := rc.last(); r.Error != "" || r.Info.Eval == nil || r.Info.Eval.Tokenizer || r.Info.Eval.Text[1] != strconv.Itoa(r.Info.Eval.IDs[1]) {
		t.Fatalf("load without a tokenizer: %+v", r)
	}
	e.Handle(wire.Request{Op: wire.OpPrompt, Prompt: &wire.Prompt{Text: "hello"}}, nil, rc.emit, nil)
	if r := rc.last(); !strings.Contains(r.Error, "needs the model's tokenizer") {
		t.Errorf("text prompt without a tokenizer: %+v", r)
	}
	e.Handle(wire.Request{Op: wire.OpLoad, Source: &wire.Source{Kind: "llama", Name: "bytes.bin", Tokenizer: "bytes.tokenizer.bin", Prompt: &wire.Prompt{Tokens: 64, Gen: 4}}},
		map[string][]byte{"file": ckpt, "tokenizer": tb}, rc.emit, nil)
	if r := rc.last(); r.Error != "" || r.Info.Tokens != 64 {
		t.Fatalf("load: %+v", r)
	}
	for _, bad := range []wire.Prompt{{Tokens: 5000}, {Task: "sing"}, {Depth: 2, Task: "passkey"}, {Text: strings.Repeat("x", wire.MaxPromptText+1)}, {Text: "a long prompt", Tokens: 6}} {
		e.Handle(wire.Request{Op: wire.OpPrompt, Prompt: &bad}, nil, rc.emit, nil)
		if r := rc.last(); r.Error == "" || !strings.Contains(r.Error, "bytes.bin") {
			t.Errorf("prompt %+v: %+v, want an error naming the model", bad, r)
		}
		if e.info.Tokens != 64 {
			t.Fatalf("a refused prompt replaced the loaded run: %+v", e.info)
		}
	}
	e.Handle(wire.Request{ID: 7, Op: wire.OpPrompt, Prompt: &wire.Prompt{Task: "passkey", Tokens: 200, Depth: 0.5, Gen: 8}}, nil, rc.emit, nil)
	r := rc.last()
	if r.Error != "" || r.Info == nil || r.Info.Eval == nil || r.ID != 7 || !r.Done {
		t.Fatalf("pass-key prompt: %+v", r)
	}
	ev := r.Info.Eval
	if len(ev.Answers) != 1 || len(ev.Key) != 5 || len(ev.Needles) != 5 || r.Info.Tokens != len(ev.IDs) {
		t.Fatalf("pass key: answers %v key %q needles %v", ev.Answers, ev.Key, ev.Needles)
	}
	a := ev.Answers[0]
	if got := strings.Join(ev.Text[a.Start:a.End], ""); got != ev.Key {
		t.Errorf("answer span reads %q, want the key %q", got, ev.Key)
	}
	if got := strings.Join(ev.Text[ev.Needles[0]:ev.Needles[4]+1], ""); got != ev.Key || ev.Needles[4] >= ev.Prefix {
		t.Errorf("needles %v read %q in a prefix of %d, want the key %q", ev.Needles, got, ev.Prefix, ev.Key)
	}
	if !slices.Equal(r.Info.Needles, ev.Needles) || len(r.Info.NeedleProbes) != 5 {
		t.Errorf("the sample's needles %v and probes %v, want %v and 5 probes", r.Info.Needles, r.Info.NeedleProbes, ev.Needles)
	}
	rc.out = nil
	e.Handle(wire.Request{Op: wire.OpEval, Methods: []string{"full", "streaming"}, Params: defParams}, nil, rc.emit, nil)
	if len(rc.out) != 3 || rc.out[1].r.Eval == nil || float64(rc.out[1].r.Eval.NeedleAcc) != float64(ev.NeedleAcc) && !math.IsNaN(float64(ev.NeedleAcc)) {
		t.Errorf("eval of the pass key: %+v", rc.out)
	}
	e.Handle(wire.Request{Op: wire.OpPrompt, Prompt: &wire.Prompt{Task: "copy", Tokens: 300}}, nil, rc.emit, nil)
	if r := rc.last(); r.Error != "" || len(r.Info.Eval.Answers) == 0 || r.Info.Eval.Prompt.Gen != wire.PromptGen || r.Info.Needles != nil {
		t.Errorf("copy prompt: %+v", r)
	}
}

// TestEvalSuperseded: a newer eval request queued while one runs stops it
// between methods, and heads asked meanwhile are answered between them.
func TestEvalSuperseded(t *testing.T) {
	_, ckpt, tb := byteModel(t)
	q := NewQueue()
	var out []wire.Response
	w := &Worker{E: &Engine{}, Q: q, Emit: func(r wire.Response, _ map[string][]byte) { out = append(out, r) }}
	w.run(item{req: wire.Request{ID: 1, Op: wire.OpLoad, Source: &wire.Source{Kind: "llama", Name: "b.bin", Tokenizer: "t.bin", Prompt: &wire.Prompt{Tokens: 64, Gen: 4}}}, bufs: map[string][]byte{"file": ckpt, "tokenizer": tb}})
	if out[len(out)-1].Error != "" {
		t.Fatal(out[len(out)-1])
	}
	out = nil
	q.Push(wire.Request{ID: 3, Op: wire.OpHead, Layer: 1, Head: 2, Method: "topk", Params: defParams}, nil)
	q.Push(wire.Request{ID: 4, Op: wire.OpEval, Methods: []string{"topk"}, Params: defParams}, nil)
	w.run(item{req: wire.Request{ID: 2, Op: wire.OpEval, Methods: []string{"hae-ols", "topk", "snapkv"}, Params: defParams}})
	var ids []int
	for _, r := range out {
		if r.Error != "" {
			t.Fatalf("%+v", r)
		}
		ids = append(ids, r.ID)
	}
	// Eval 2 answers hae-ols's numbers, then the head runs, then eval 2
	// stops (before hae-ols's free run).
	if !slices.Equal(ids, []int{2, 3}) || !out[0].Eval.FreePending {
		t.Errorf("answers %v, want the first method's numbers of eval 2, then head 3 (eval 2 superseded by 4)", ids)
	}
	if it, ok := q.take(func(string) bool { return true }); !ok || it.req.ID != 4 {
		t.Errorf("queue holds %+v, want eval 4", it.req)
	}
}

// TestEvalStopsInFreeRun: the free run asks before each token whether a
// newer request supersedes the eval, so a slider move waits for one
// forward pass; the teacher-forced numbers computed so far are kept and
// the next eval finishes the free run from them.
func TestEvalStopsInFreeRun(t *testing.T) {
	_, ckpt, tb := byteModel(t)
	e := &Engine{}
	rc := &recorder{}
	e.Handle(wire.Request{ID: 1, Op: wire.OpLoad, Source: &wire.Source{Kind: "llama", Name: "b.bin", Tokenizer: "t.bin", Prompt: &wire.Prompt{Tokens: 64, Gen: 8}}}, map[string][]byte{"file": ckpt, "tokenizer": tb}, rc.emit, nil)
	if r := rc.last(); r.Error != "" {
		t.Fatal(r.Error)
	}
	calls := 0
	// Call 1 follows the first numbers; calls 2 and 3 are the free run's
	// first two tokens: stop there.
	stop := func() bool { calls++; return calls == 3 }
	var out []wire.Response
	emit := func(r wire.Response, _ map[string][]byte) { out = append(out, r) }
	e.Handle(wire.Request{ID: 2, Op: wire.OpEval, Methods: []string{"hae-ols"}, Params: defParams}, nil, emit, stop)
	if calls != 3 || len(out) != 1 || out[0].Error != "" || !out[0].Eval.FreePending {
		t.Fatalf("%d checks, answers %+v: want the numbers without the free run, stopped at its second token", calls, out)
	}
	out = nil
	e.Handle(wire.Request{ID: 3, Op: wire.OpEval, Methods: []string{"hae-ols"}, Params: defParams}, nil, emit, nil)
	if len(out) != 2 || out[1].Eval.FreePending || len(out[1].Eval.Free) != 8 || !out[1].Done {
		t.Fatalf("answers %+v: want the kept numbers, then the whole result", out)
	}
}

// TestPreload: a preset made ahead of its load request is the sample that
// load takes (the same bits as making it then); a load of another preset
// or seed makes its own, and any load drops the preloaded one.
func TestPreload(t *testing.T) {
	load := func(e *Engine, src wire.Source) wire.Response {
		t.Helper()
		rc := &recorder{t: t}
		e.Handle(wire.Request{ID: 1, Op: wire.OpLoad, Source: &src}, nil, rc.emit, nil)
		r := rc.last()
		if r.Error != "" || !r.Done {
			t.Fatalf("load %+v: %+v", src, r)
		}
		return r
	}
	plain := &Engine{}
	want := load(plain, wire.Source{Kind: "preset", Preset: "tiny"})

	e := &Engine{}
	e.Preload(&wire.Source{Kind: "preset", Preset: "tiny"})
	if e.early == nil {
		t.Fatal("Preload of a preset made nothing")
	}
	early := e.early.s
	got := load(e, wire.Source{Kind: "preset", Preset: "tiny"})
	if e.model.Sample != early {
		t.Error("the load did not take the preloaded sample")
	}
	if e.early != nil {
		t.Error("the preloaded sample is still held after its load")
	}
	if !reflect.DeepEqual(got.Info, want.Info) || !reflect.DeepEqual(e.model.Sample, plain.model.Sample) {
		t.Errorf("preloaded: info %+v, made at the load: %+v (or the samples differ)", got.Info, want.Info)
	}

	for _, src := range []wire.Source{
		{Kind: "preset", Preset: "tiny", Seed: 7},
		{Kind: "preset", Preset: "default"},
		{Kind: "file", Name: "x.safetensors"},
	} {
		e := &Engine{}
		e.Preload(&wire.Source{Kind: "preset", Preset: "tiny"})
		early := e.early.s
		rc := &recorder{t: t}
		e.Handle(wire.Request{ID: 1, Op: wire.OpLoad, Source: &src}, nil, rc.emit, nil)
		if e.model != nil && e.model.Sample == early {
			t.Errorf("a load of %+v took the preloaded tiny preset", src)
		}
		if e.early != nil {
			t.Errorf("a load of %+v kept the preloaded sample", src)
		}
	}
	for _, src := range []*wire.Source{nil, {Kind: "url", URL: "samples/x.safetensors"}, {Kind: "preset", Preset: "nope"}} {
		e := &Engine{}
		e.Preload(src)
		if e.early != nil {
			t.Errorf("Preload(%+v) made a sample", src)
		}
	}
}

// TestGridBudgetMatchesCore: under a budget policy the grid and the
// selected head's view give each head its share of the model's budget,
// the numbers of core.Model.Grid under the same policy.
func TestGridBudgetMatchesCore(t *testing.T) {
	if !slices.Equal(wire.Budgets, core.Budgets) {
		t.Errorf("wire.Budgets %v, core.Budgets %v", wire.Budgets, core.Budgets)
	}
	e, rc, m := loaded(t, "induction")
	for _, budget := range []string{"pyramid", "hae"} {
		rc.out = nil
		p := defParams
		p.Ratio, p.Budget = 0.2, budget
		e.Handle(wire.Request{ID: 2, Op: wire.OpGrid, Method: "hae-ols", Params: p}, nil, rc.emit, nil)
		if r := rc.last(); r.Error != "" || !r.Done || r.Grid == nil || r.Grid.NA != "" {
			t.Fatalf("%s: %+v", budget, r)
		}
		native, err := m.Grid("hae-ols", coreParams(p), 1)
		if err != nil {
			t.Fatal(err)
		}
		shares := map[float64]bool{}
		for _, s := range rc.out {
			for _, c := range s.r.Grid.Cells {
				want := native[c.Layer*m.Sample.H+c.Head]
				shares[c.Asked] = true
				if c.Err != want.Err || c.Asked != want.Asked {
					t.Errorf("%s L%d H%d: err %v asked %v, core %v %v", budget, c.Layer, c.Head, c.Err, c.Asked, want.Err, want.Asked)
				}
			}
		}
		if len(shares) < 2 {
			t.Errorf("%s: every head got the same share %v", budget, shares)
		}
		rh := &recorder{t: t}
		e.Handle(wire.Request{ID: 3, Op: wire.OpHead, Method: "hae-ols", Params: p, Layer: 1, Head: 2}, nil, rh.emit, nil)
		if h := rh.last().Head; h == nil || h.Metrics.Err != native[m.Sample.H+2].Err || h.Metrics.Asked != native[m.Sample.H+2].Asked {
			t.Errorf("%s: the head view %+v, core %+v", budget, rh.last().Head, native[m.Sample.H+2])
		}
	}
	rc.out = nil
	e.Handle(wire.Request{ID: 4, Op: wire.OpGrid, Method: "hae-ols", Params: wire.Params{Ratio: 0.2, Lambda: 0.25, Phi: 0.25, Tau: 1, Budget: "even"}}, nil, rc.emit, nil)
	if r := rc.last(); !strings.Contains(r.Error, `budget "even"`) {
		t.Errorf("an unknown budget: %+v", r)
	}
}

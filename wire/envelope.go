package wire

import "fmt"

// Envelope is what travels beside a message's JSON and buffers in the
// JavaScript object the pages post ({json, buffers, ...envelope}): what a
// page decides on without decoding the JSON (see the package comment). The
// worker's maps for the heatmap page carry Relay, Key, View, Seq, Ladder and
// PostedAt; the app page adds RelayedAt as it passes them on; its show
// messages carry only Show and Seq; the heatmap page marks the ladder maps
// it draws for a show message Shown. A zero field is absent.
type Envelope struct {
	// Relay is RelayHeatmap on the worker's maps for the heatmap page,
	// which the app page passes on unread.
	Relay string
	// Key names the head's unchanging maps part (the keys of a Recent).
	Key string
	// View is the maps' Maps.View, Seq their Maps.Seq or, on a show
	// message, the ID of the head request whose view Show is.
	View string
	Seq  int
	// Ladder marks maps of a ladder step (Maps.Ladder).
	Ladder bool
	// Show asks the heatmap page to draw its ladder's maps of this view.
	Show string
	// Shown marks ladder maps drawn for a show message.
	Shown bool
	// PostedAt and RelayedAt are when the worker posted the maps and the
	// app page passed them on: performance.timeOrigin + performance.now()
	// in ms, a clock every page of the browser shares.
	PostedAt, RelayedAt float64
}

// RelayHeatmap is Envelope.Relay of the maps the app page passes on to its
// heatmap page.
const RelayHeatmap = "heatmap"

// The envelope's field names in the JavaScript object.
const (
	fieldRelay     = "relay"
	fieldKey       = "key"
	fieldView      = "view"
	fieldSeq       = "seq"
	fieldLadder    = "ladder"
	fieldShow      = "show"
	fieldShown     = "shown"
	fieldPostedAt  = "posted_at"
	fieldRelayedAt = "relayed_at"
)

// Setter is a JavaScript object as the pages' js packages (syscall/js and
// vugu's) give it: Set(key, v) sets a field.
type Setter interface {
	Set(key string, v any)
}

// Fields reads the fields of a JavaScript object: String and Number report
// false for a field that is missing or of another type; Bool is the
// field's truthiness.
type Fields interface {
	String(key string) (string, bool)
	Number(key string) (float64, bool)
	Bool(key string) bool
}

// Write sets the envelope's fields that are not zero on o.
func (e Envelope) Write(o Setter) {
	for _, f := range []struct {
		key string
		v   string
	}{{fieldRelay, e.Relay}, {fieldKey, e.Key}, {fieldView, e.View}, {fieldShow, e.Show}} {
		if f.v != "" {
			o.Set(f.key, f.v)
		}
	}
	if e.Seq != 0 {
		o.Set(fieldSeq, e.Seq)
	}
	if e.Ladder {
		o.Set(fieldLadder, true)
	}
	if e.Shown {
		o.Set(fieldShown, true)
	}
	if e.PostedAt != 0 {
		o.Set(fieldPostedAt, e.PostedAt)
	}
	if e.RelayedAt != 0 {
		o.Set(fieldRelayedAt, e.RelayedAt)
	}
}

// ReadEnvelope reads the envelope of a message; fields that are missing or
// of the wrong type read as zero.
func ReadEnvelope(f Fields) Envelope {
	str := func(k string) string { s, _ := f.String(k); return s }
	num := func(k string) float64 { x, _ := f.Number(k); return x }
	return Envelope{
		Relay: str(fieldRelay), Key: str(fieldKey), View: str(fieldView), Seq: int(num(fieldSeq)),
		Ladder: f.Bool(fieldLadder), Show: str(fieldShow), Shown: f.Bool(fieldShown),
		PostedAt: num(fieldPostedAt), RelayedAt: num(fieldRelayedAt),
	}
}

// JSValue is a JavaScript value as the pages' js packages (syscall/js and
// vugu's, whose Type is T) give it.
type JSValue[V any, T fmt.Stringer] interface {
	Get(key string) V
	Type() T
	String() string
	Float() float64
	Truthy() bool
}

// JSFields reads the fields of a JavaScript object V (Fields), for either
// js package: JSFields[js.Value, js.Type]{v}.
type JSFields[V JSValue[V, T], T fmt.Stringer] struct{ V V }

func (f JSFields[V, T]) String(key string) (string, bool) {
	if x := f.V.Get(key); x.Type().String() == "string" {
		return x.String(), true
	}
	return "", false
}

func (f JSFields[V, T]) Number(key string) (float64, bool) {
	if x := f.V.Get(key); x.Type().String() == "number" {
		return x.Float(), true
	}
	return 0, false
}

func (f JSFields[V, T]) Bool(key string) bool { return f.V.Get(key).Truthy() }

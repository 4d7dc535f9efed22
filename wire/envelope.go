package wire

// Envelope is what travels beside a message's JSON and buffers in the
// JavaScript object the pages post ({json, buffers, ...envelope}): what a
// page decides on without decoding the JSON (see the package comment). The
// worker's maps for the heatmap page carry Relay, Key, View, Seq, Ahead and
// PostedAt; the app page adds RelayedAt as it passes them on; its show
// messages carry only Show and Seq; the heatmap page marks the maps ahead
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
	// Ahead marks maps sent ahead (Maps.Ahead).
	Ahead bool
	// Show asks the heatmap page to draw the maps ahead of this view.
	Show string
	// Shown marks maps ahead drawn for a show message.
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
	fieldAhead     = "ahead"
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
	if e.Ahead {
		o.Set(fieldAhead, true)
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
		Ahead: f.Bool(fieldAhead), Show: str(fieldShow), Shown: f.Bool(fieldShown),
		PostedAt: num(fieldPostedAt), RelayedAt: num(fieldRelayedAt),
	}
}

package wire

import (
	"net/url"
	"strings"
)

// DefaultPreset is the sample a view opens when its address names none
// (ui/state.DefaultSample).
const DefaultPreset = "default"

// Hints reads, from a page address's query (with or without its "?"),
// what the worker can start on before the page's first request: where
// the page will compute ("auto", "cpu", "gpu"; "" when the query says
// nothing usable) and, when the view's sample is a generator preset, its
// source (nil otherwise). A wrong hint costs only the early work: the
// page's own requests decide.
func Hints(rawQuery string) (compute string, preset *Source) {
	q, _ := url.ParseQuery(strings.TrimPrefix(rawQuery, "?"))
	switch c := q.Get("compute"); c {
	case "auto", "cpu", "gpu":
		compute = c
	}
	name := DefaultPreset
	if v, ok := q["sample"]; ok && len(v) > 0 {
		name = v[len(v)-1]
	}
	if name == "" || len(name) > 64 || strings.ContainsAny(name, "/:.\\") || strings.ToLower(name) != name {
		return compute, nil
	}
	return compute, &Source{Kind: "preset", Preset: name}
}

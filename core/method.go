package core

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Method is one KV-cache compression method (HAE-OLS.md §3-§4). Each lives in
// a file of its own and registers itself by name in init, so a new method is
// one file.
type Method interface {
	// Name is the registry key, e.g. "hae-ols".
	Name() string
	// Describe is one sentence for help texts and the UI.
	Describe() string
	// Compress builds the compressed cache of the group's KV head within the
	// budget of p. It must not modify g.
	Compress(g *Group, p Params) (*Cache, error)
}

// Tuned is implemented by a method whose result depends on some of the
// HAE-OLS parameters of Params: Tunes reports whether it reads the one
// named ("lambda", "phi" or "tau"). A method without it reads none of them.
type Tuned interface {
	Tunes(param string) bool
}

// Tunes reports whether the named method's result depends on the HAE-OLS
// parameter param ("lambda", "phi" or "tau"): a caller keeping results by
// parameters need not compute them again for one it does not read.
func Tunes(method, param string) bool {
	m, ok := registry[method].(Tuned)
	return ok && m.Tunes(param)
}

// Selector is implemented by a method that keeps some tokens exactly by a
// choice of its own: Anchors says how it picks them, completing "the method
// keeps N anchors ..." in the UI's explanation of the stages.
type Selector interface {
	Anchors() string
}

// AnchorReason is how the named method picks its exact anchors, in words
// (Selector), or "with the most attention mass" for a method that does not
// say.
func AnchorReason(method string) string {
	if m, ok := registry[method].(Selector); ok {
		return m.Anchors()
	}
	return "with the most attention mass"
}

// ErrNeedsKV is returned (wrapped) by a method that reads keys and values
// (hae-ols, hae-nosvd, hae-merge, lowrank, quant) when the sample holds
// attention probabilities only (HAE-OLS.md §6).
var ErrNeedsKV = errors.New("needs q, k and v; this sample holds attention only")

var registry = map[string]Method{}

// Register adds m to the method registry; it panics on a duplicate name.
func Register(m Method) {
	if _, dup := registry[m.Name()]; dup {
		panic("core: method registered twice: " + m.Name())
	}
	registry[m.Name()] = m
}

// Lookup returns the registered method of that name.
func Lookup(name string) (Method, error) {
	m, ok := registry[name]
	if !ok {
		return nil, fmt.Errorf("unknown method %q (known: %s)", name, strings.Join(MethodNames(), ", "))
	}
	return m, nil
}

// methodOrder is the display order of the built-in methods; others sort after.
var methodOrder = []string{"hae-ols", "hae-nosvd", "hae-merge", "entropy", "topk", "snapkv", "streaming", "lowrank", "quant", "full"}

// MethodNames lists the registered methods, HAE-OLS and its ablations first.
func MethodNames() []string {
	rank := map[string]int{}
	for i, n := range methodOrder {
		rank[n] = i
	}
	var names []string
	for n := range registry {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		ri, oki := rank[names[i]]
		rj, okj := rank[names[j]]
		switch {
		case oki && okj:
			return ri < rj
		case oki != okj:
			return oki
		}
		return names[i] < names[j]
	})
	return names
}

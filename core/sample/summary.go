package sample

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/haeols/haeols/internal/termsafe"
)

// Summary describes s for people (haeols info): shapes, dtype as read, the
// prefix/probe split, the scale, tokens, needles and the rest of the metadata,
// one "label  value" line each. It says where a value is a default. Every
// string from the file is printed terminal-safe (package internal/termsafe:
// control characters escaped), so metadata cannot forge lines or send
// escape sequences. It does not validate s and never panics on a malformed
// one.
func Summary(s *Sample) string {
	var b strings.Builder
	line := func(label, format string, a ...any) {
		fmt.Fprintf(&b, "%-12s %s\n", label, fmt.Sprintf(format, a...))
	}
	if s.Meta.Model != "" {
		line("model", "%s", termsafe.String(s.Meta.Model))
	}
	if s.Meta.Source != "" {
		line("source", "%s", termsafe.String(s.Meta.Source))
	}
	if s.Meta.Description != "" {
		line("description", "%s", termsafe.String(s.Meta.Description))
	}
	if s.HasQKV() {
		group := "?"
		if s.HKV > 0 {
			group = fmt.Sprint(s.H / s.HKV)
		}
		line("shape", "L=%d layers, H=%d query heads, Hkv=%d KV heads (group %s), N=%d positions, d=%d", s.L, s.H, s.HKV, group, s.N, s.D)
	} else {
		line("shape", "L=%d layers, H=%d heads, N=%d positions", s.L, s.H, s.N)
	}
	var ts []string
	if s.HasQKV() {
		ts = append(ts,
			fmt.Sprintf("q [%d %d %d %d]", s.L, s.H, s.N, s.D),
			fmt.Sprintf("k [%d %d %d %d]", s.L, s.HKV, s.N, s.D),
			fmt.Sprintf("v [%d %d %d %d]", s.L, s.HKV, s.N, s.D))
	}
	if s.HasAttn() {
		ts = append(ts, fmt.Sprintf("attn [%d %d %d %d]", s.L, s.H, s.N, s.N))
	}
	tensors := strings.Join(ts, ", ")
	if !s.HasQKV() {
		tensors += " (attention only: methods that need K and V are unavailable)"
	}
	line("tensors", "%s", tensors)
	if s.SourceDType != "" {
		line("dtype", "%s (as stored; held as float32)", s.SourceDType)
	}
	n := s.Prefix()
	how := "from metadata"
	if s.Meta.Prefix <= 0 {
		how = "default N - min(64, N/8)"
	}
	line("prefix", "n=%d cached positions + %d probe queries (%s)", n, s.N-n, how)
	switch {
	case s.Meta.Scale > 0:
		line("scale", "%.6g (from metadata)", s.Meta.Scale)
	case s.D > 0:
		line("scale", "%.6g (default 1/sqrt(d))", 1/math.Sqrt(float64(s.D)))
	default:
		line("scale", "none (attention only)")
	}
	if len(s.Meta.Tokens) > 0 {
		const show = 8
		head := s.Meta.Tokens[:min(show, len(s.Meta.Tokens))]
		q := make([]string, len(head))
		for i, t := range head {
			q[i] = fmt.Sprintf("%q", t)
		}
		more := ""
		if len(s.Meta.Tokens) > show {
			more = " ..."
		}
		line("tokens", "%d: %s%s", len(s.Meta.Tokens), strings.Join(q, " "), more)
	} else {
		line("tokens", "none")
	}
	if len(s.Meta.Needles) > 0 || len(s.Meta.NeedleProbes) > 0 {
		line("needles", "%d at positions %s; %d probe queries ask for them: %s",
			len(s.Meta.Needles), intList(s.Meta.Needles), len(s.Meta.NeedleProbes), intList(s.Meta.NeedleProbes))
	}
	keys := make([]string, 0, len(s.Meta.Extra))
	for k := range s.Meta.Extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		line("meta", "%s = %q", termsafe.String(k), s.Meta.Extra[k])
	}
	return b.String()
}

// intList formats at most 16 integers, e.g. "[3 17 40]" or "[0 1 ... (40 in all)]".
func intList(x []int) string {
	const show = 16
	if len(x) <= show {
		return fmt.Sprint(x)
	}
	return strings.TrimSuffix(fmt.Sprint(x[:show]), "]") + fmt.Sprintf(" ... (%d in all)]", len(x))
}

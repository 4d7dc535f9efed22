package model

import (
	"regexp"
	"testing"
)

// layerPattern is what layerName accepts, as a regular expression (the
// package does not link regexp: it would compile at every start of the web
// app).
var layerPattern = regexp.MustCompile(`^model\.layers\.(0|[1-9][0-9]{0,4})\.(.+)$`)

func TestHFName(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"model.embed_tokens.weight", "token_embd.weight"},
		{"model.layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight"},
		{"model.layers.12.mlp.down_proj.weight", "blk.12.ffn_down.weight"},
		{"model.layers.99999.input_layernorm.weight", "blk.99999.attn_norm.weight"},
		{"model.layers.100000.input_layernorm.weight", ""},
		{"model.layers.01.input_layernorm.weight", ""},
		{"model.layers.x.input_layernorm.weight", ""},
		{"model.layers..input_layernorm.weight", ""},
		{"model.layers.3.", ""},
		{"model.layers.3.unknown", ""},
		{"layers.3.self_attn.q_proj.weight", ""},
	} {
		if got := HFName(c.name); got != c.want {
			t.Errorf("HFName(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

// FuzzLayerName checks layerName against its regular expression.
func FuzzLayerName(f *testing.F) {
	for _, s := range []string{"model.layers.0.a", "model.layers.01.a", "model.layers.123456.a", "model.layers.7.", "model.layers.7.a.b", "model.layers.7.\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		layer, rest, ok := layerName(name)
		m := layerPattern.FindStringSubmatch(name)
		if ok != (m != nil) || ok && (layer != m[1] || rest != m[2]) {
			t.Errorf("layerName(%q) = %q, %q, %v; the pattern says %q", name, layer, rest, ok, m)
		}
	})
}

package wire

import "testing"

func TestHints(t *testing.T) {
	tests := []struct {
		query, compute, preset string
	}{
		{"", "", "default"},
		{"?compute=cpu", "cpu", "default"},
		{"sample=needle&compute=gpu", "gpu", "needle"},
		{"sample=samples/default.safetensors", "", ""},
		{"sample=models/induction.gguf&compute=auto", "auto", ""},
		{"sample=file:a.npz", "", ""},
		{"sample=Needle&compute=cuda", "", ""},
		{"sample=", "", ""},
		{"%zz", "", "default"},
	}
	for _, tc := range tests {
		c, src := Hints(tc.query)
		got := ""
		if src != nil {
			if src.Kind != "preset" {
				t.Errorf("%q: source kind %q", tc.query, src.Kind)
			}
			got = src.Preset
		}
		if c != tc.compute || got != tc.preset {
			t.Errorf("Hints(%q) = %q, %q; want %q, %q", tc.query, c, got, tc.compute, tc.preset)
		}
	}
}

package hf

import (
	"regexp"
	"testing"
)

// shardPattern is what shardName accepts, as a regular expression (the
// package does not link regexp: it would compile at every start of the web
// app).
var shardPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*\.safetensors$`)

func TestShardName(t *testing.T) {
	for _, c := range []struct {
		file string
		want bool
	}{
		{"model.safetensors", true},
		{"model-00001-of-00002.safetensors", true},
		{"_x.safetensors", true},
		{"a.b_c-d.safetensors", true},
		{".safetensors", false},
		{"x.safetensors.bak", false},
		{"../model.safetensors", false},
		{"dir/model.safetensors", false},
		{".hidden.safetensors", false},
		{"-x.safetensors", false},
		{"modèle.safetensors", false},
		{"model.SAFETENSORS", false},
		{"", false},
	} {
		if got := shardName(c.file); got != c.want {
			t.Errorf("shardName(%q) = %v, want %v", c.file, got, c.want)
		}
		if got := shardPattern.MatchString(c.file); got != c.want {
			t.Errorf("the pattern on %q = %v, want %v", c.file, got, c.want)
		}
	}
}

// FuzzShardName checks shardName against its regular expression.
func FuzzShardName(f *testing.F) {
	for _, s := range []string{"model.safetensors", "../a.safetensors", "a-1.safetensors", ".x.safetensors", "a.safetensorsx"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, file string) {
		if got, want := shardName(file), shardPattern.MatchString(file); got != want {
			t.Errorf("shardName(%q) = %v, the pattern says %v", file, got, want)
		}
	})
}

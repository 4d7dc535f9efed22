package hf

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/haeols/haeols/core/half"
	"github.com/haeols/haeols/core/safetensors"
)

const llamaConfig = `{
  "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
  "num_attention_heads": 8, "num_key_value_heads": 2, "vocab_size": 100,
  "max_position_embeddings": 256, "rms_norm_eps": 1e-5, "rope_theta": 500000,
  "rope_scaling": {"rope_type": "llama3", "factor": 32, "low_freq_factor": 1, "high_freq_factor": 4, "original_max_position_embeddings": 8192},
  "tie_word_embeddings": true, "bos_token_id": 1, "eos_token_id": [2, 3], "torch_dtype": "bfloat16"
}`

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(llamaConfig))
	if err != nil {
		t.Fatal(err)
	}
	if c.Arch() != "LlamaForCausalLM" || c.HeadDim != 8 || c.NumKeyValueHeads != 2 || *c.EOSTokenID != 2 || *c.BOSTokenID != 1 ||
		c.RopeScaling.Kind() != "llama3" || !c.TieWordEmbeddings || c.QKVBias() || c.QKNorm() {
		t.Errorf("parsed %+v", c)
	}
	// Defaults.
	c, err = ParseConfig([]byte(`{"architectures":["Qwen2ForCausalLM"],"hidden_size":32,"intermediate_size":64,"num_hidden_layers":1,"num_attention_heads":4,"vocab_size":10}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.NumKeyValueHeads != 4 || c.HeadDim != 8 || c.RopeTheta != 10000 || c.RMSNormEps != 1e-6 || c.MaxPositionEmbeddings != 32768 || !c.QKVBias() || c.OutputBias() || c.TieWordEmbeddings {
		t.Errorf("defaults %+v", c)
	}
	c, err = ParseConfig([]byte(`{"architectures":["Qwen3ForCausalLM"],"hidden_size":32,"head_dim":16,"intermediate_size":64,"num_hidden_layers":1,"num_attention_heads":4,"num_key_value_heads":2,"vocab_size":10}`))
	if err != nil || c.HeadDim != 16 || !c.QKNorm() || c.QKVBias() {
		t.Errorf("qwen3: %+v %v", c, err)
	}
	for _, bad := range []struct{ edit, want string }{
		{`"architectures": ["GPT2LMHeadModel"]`, `architecture "GPT2LMHeadModel" is not supported`},
		{`"architectures": []`, `architecture "" is not supported`},
		{`"hidden_size": 0`, "hidden_size = 0"},
		{`"hidden_size": 100000000`, "hidden_size = 100000000"},
		{`"num_key_value_heads": 3`, "does not divide"},
		{`"num_hidden_layers": -1`, "num_hidden_layers = -1"},
		{`"rope_scaling": {"rope_type": "yarn", "factor": 4}`, `rope_scaling type "yarn"`},
		{`"rope_scaling": {"rope_type": "llama3", "factor": 8}`, "llama3 rope_scaling"},
		{`"bos_token_id": 100`, "bos_token_id 100"},
		{`"rms_norm_eps": -1`, "rms_norm_eps"},
	} {
		key := bad.edit[:strings.Index(bad.edit, ":")]
		cfg := replaceKey(llamaConfig, key, bad.edit)
		_, err := ParseConfig([]byte(cfg))
		if err == nil || !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.edit, err, bad.want)
		}
	}
	if _, err := ParseConfig([]byte(llamaConfig + "x")); err == nil {
		t.Error("trailing garbage accepted")
	}
}

// replaceKey replaces the "key": value pair of the JSON text cfg (value a
// scalar, list or flat object) with pair.
func replaceKey(cfg, key, pair string) string {
	i := strings.Index(cfg, key+":")
	j := i + len(key) + 1
	depth := 0
	for ; j < len(cfg); j++ {
		c := cfg[j]
		if c == '[' || c == '{' {
			depth++
		}
		if c == ']' || c == '}' {
			if depth == 0 {
				break
			}
			depth--
		}
		if c == ',' && depth == 0 {
			break
		}
	}
	return cfg[:i] + pair + cfg[j:]
}

func tensors(t *testing.T, dtype string) []*safetensors.Tensor {
	var ts []*safetensors.Tensor
	for i, name := range []string{"model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight", "model.norm.weight"} {
		shape := []int{4, 8}
		if i == 2 {
			shape = []int{8}
		}
		n := 1
		for _, d := range shape {
			n *= d
		}
		x := make([]float32, n)
		for j := range x {
			x[j] = float32(math.Sin(float64(j+10*i))) * 3
		}
		tn, err := NewTensor(name, dtype, shape, x)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, tn)
	}
	return ts
}

func TestWriteOpen(t *testing.T) {
	cfg, err := ParseConfig([]byte(llamaConfig))
	if err != nil {
		t.Fatal(err)
	}
	for _, dtype := range []string{"F32", "F16", "BF16"} {
		for _, shard := range []int64{0, 70} {
			dir := filepath.Join(t.TempDir(), "m")
			ts := tensors(t, dtype)
			in := &Folder{Config: cfg, Tensors: ts, Tokenizer: []byte(`{"model":{}}`)}
			if err := Write(dir, in, shard); err != nil {
				t.Fatal(err)
			}
			_, ixErr := os.Stat(filepath.Join(dir, IndexFile))
			if sharded := ixErr == nil; sharded != (shard > 0) {
				t.Errorf("%s shard %d: index present = %v", dtype, shard, sharded)
			}
			f, err := Open(dir)
			if err != nil {
				t.Fatalf("%s shard %d: %v", dtype, shard, err)
			}
			if string(f.Tokenizer) != `{"model":{}}` || f.TokenizerConfig != nil || f.Config.HiddenSize != 64 || *f.Config.EOSTokenID != 2 {
				t.Errorf("%s: folder %+v", dtype, f)
			}
			for _, w := range ts {
				g, ok := f.Tensor(w.Name)
				if !ok || !bytes.Equal(g.Data, w.Data) || g.DType != dtype {
					t.Fatalf("%s shard %d: tensor %s differs", dtype, shard, w.Name)
				}
				x, err := Floats(g)
				if err != nil {
					t.Fatal(err)
				}
				for j, v := range x {
					want := float32(math.Sin(float64(j+10*indexOf(w.Name)))) * 3
					switch dtype {
					case "F16":
						want = half.RoundF16(want)
					case "BF16":
						want = half.RoundBF16(want)
					}
					if v != want {
						t.Fatalf("%s %s[%d] = %v, want %v", dtype, w.Name, j, v, want)
					}
				}
			}
			if err := Write(dir, in, 0); err == nil || !strings.Contains(err.Error(), "already exists") {
				t.Errorf("Write over an existing folder: %v", err)
			}
		}
	}
}

func indexOf(name string) int {
	for i, n := range []string{"model.embed_tokens.weight", "model.layers.0.self_attn.q_proj.weight", "model.norm.weight"} {
		if n == name {
			return i
		}
	}
	return -1
}

func st(t *testing.T, ts ...*safetensors.Tensor) []byte {
	var b bytes.Buffer
	if err := safetensors.Write(&b, nil, ts); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestHostileFolders(t *testing.T) {
	ts := tensors(t, "BF16")
	a, b := st(t, ts[0]), st(t, ts[1], ts[2])
	ix := func(m string) []byte { return []byte(`{"metadata":{},"weight_map":{` + m + `}}`) }
	good := `"model.embed_tokens.weight":"a.safetensors","model.layers.0.self_attn.q_proj.weight":"b.safetensors","model.norm.weight":"b.safetensors"`
	i64 := &safetensors.Tensor{Name: "x", DType: "I64", Shape: []int{1}, Data: make([]byte, 8)}
	for _, c := range []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"no config", map[string][]byte{WeightsFile: a}, "no config.json"},
		{"no weights", map[string][]byte{ConfigFile: []byte(llamaConfig)}, "model.safetensors is missing"},
		{"arch", map[string][]byte{ConfigFile: []byte(strings.Replace(llamaConfig, "LlamaForCausalLM", "PhiForCausalLM", 1)), WeightsFile: a}, `"PhiForCausalLM" is not supported`},
		{"path", map[string][]byte{ConfigFile: []byte(llamaConfig), IndexFile: ix(`"w":"../a.safetensors"`)}, "not a plain .safetensors file name"},
		{"abs", map[string][]byte{ConfigFile: []byte(llamaConfig), IndexFile: ix(`"w":"/etc/a.safetensors"`)}, "not a plain"},
		{"empty index", map[string][]byte{ConfigFile: []byte(llamaConfig), IndexFile: ix(``)}, "no weight_map"},
		{"missing shard", map[string][]byte{ConfigFile: []byte(llamaConfig), IndexFile: ix(good), "a.safetensors": a}, "b.safetensors is missing"},
		{"not in index", map[string][]byte{ConfigFile: []byte(llamaConfig), IndexFile: ix(`"model.embed_tokens.weight":"a.safetensors","model.norm.weight":"b.safetensors"`), "a.safetensors": a, "b.safetensors": b}, "is not in model.safetensors.index.json"},
		{"wrong shard", map[string][]byte{ConfigFile: []byte(llamaConfig), IndexFile: ix(`"model.embed_tokens.weight":"b.safetensors","model.layers.0.self_attn.q_proj.weight":"b.safetensors","model.norm.weight":"b.safetensors"`), "a.safetensors": a, "b.safetensors": b}, "lists tensor model.embed_tokens.weight in b.safetensors, which does not hold it"},
		{"lists absent", map[string][]byte{ConfigFile: []byte(llamaConfig), IndexFile: ix(good + `,"extra":"a.safetensors"`), "a.safetensors": a, "b.safetensors": b}, "which does not hold it"},
		{"twice", map[string][]byte{ConfigFile: []byte(llamaConfig), IndexFile: ix(`"model.embed_tokens.weight":"a.safetensors","x":"c.safetensors"`), "a.safetensors": a, "c.safetensors": st(t, ts[0])}, "is in c.safetensors, model.safetensors.index.json says a.safetensors"},
		{"dtype", map[string][]byte{ConfigFile: []byte(llamaConfig), WeightsFile: st(t, i64)}, "dtype I64 is not supported"},
		{"bad shard", map[string][]byte{ConfigFile: []byte(llamaConfig), WeightsFile: a[:len(a)-1]}, "not a valid safetensors"},
	} {
		_, err := Decode(c.files)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// The good sharded folder decodes.
	f, err := Decode(map[string][]byte{ConfigFile: []byte(llamaConfig), IndexFile: ix(good), "a.safetensors": a, "b.safetensors": b})
	if err != nil || len(f.Tensors) != 3 {
		t.Errorf("good shards: %v", err)
	}
}

func TestOpenHostile(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "config.json") {
		t.Errorf("empty dir: %v", err)
	}
	os.WriteFile(filepath.Join(dir, ConfigFile), bytes.Repeat([]byte(" "), MaxConfigBytes+1), 0o644)
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("big config: %v", err)
	}
	os.WriteFile(filepath.Join(dir, ConfigFile), []byte(llamaConfig), 0o644)
	os.Mkdir(filepath.Join(dir, WeightsFile), 0o755)
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("weights dir: %v", err)
	}
}

// FuzzParseConfig: no config.json panics; whatever parses validates.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(llamaConfig))
	f.Add([]byte(`{"architectures":["Qwen2ForCausalLM"],"hidden_size":32,"intermediate_size":64,"num_hidden_layers":1,"num_attention_heads":4,"vocab_size":10,"eos_token_id":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("parsed config does not validate: %v", err)
		}
	})
}

// FuzzDecodeIndex: hostile index files fail cleanly.
func FuzzDecodeIndex(f *testing.F) {
	f.Add([]byte(`{"metadata":{},"weight_map":{"model.norm.weight":"a.safetensors"}}`))
	f.Fuzz(func(t *testing.T, ix []byte) {
		Decode(map[string][]byte{ConfigFile: []byte(llamaConfig), IndexFile: ix, "a.safetensors": {8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '}})
	})
}

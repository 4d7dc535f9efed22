package ui

import (
	"reflect"
	"strings"
	"testing"
)

// TestPickFiles: the files chosen or dropped together become one source,
// the files read and their buffers; what is wrong or missing is named.
func TestPickFiles(t *testing.T) {
	folder := []string{"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "README.md", "generation_config.json"}
	shards := []string{"model-00002-of-00002.safetensors", "config.json", "model.safetensors.index.json", "model-00001-of-00002.safetensors", "tokenizer.json"}
	tests := []struct {
		name   string
		files  []string
		dir    string
		kind   string
		read   []int
		bufs   []string
		src    []string // Source.Files
		label  string
		notice string // substring of the notice ("" for none)
		err    string // substring of the error ("" for success)
	}{
		{name: "sample", files: []string{"a.safetensors"}, kind: "file", read: []int{0}, bufs: []string{"file"}, label: "a.safetensors"},
		{name: "llama2.c", files: []string{"stories15M.bin"}, kind: "llama", read: []int{0}, bufs: []string{"file"}, label: "stories15M.bin"},
		{name: "llama2.c with its tokenizer", files: []string{"kjv3m.tokenizer.bin", "kjv3m.bin"}, kind: "llama", read: []int{1, 0}, bufs: []string{"file", "tokenizer"}, label: "kjv3m.bin"},
		{name: "gguf", files: []string{"SmolLM2-135M-Q8_0.GGUF"}, kind: "checkpoint", read: []int{0}, bufs: []string{"SmolLM2-135M-Q8_0.GGUF"}, src: []string{"SmolLM2-135M-Q8_0.GGUF"}, label: "SmolLM2-135M-Q8_0.GGUF"},
		{name: "folder", files: folder, dir: "SmolLM2-135M", kind: "checkpoint", read: []int{0, 1, 2, 3}, bufs: folder[:4], src: folder[:4], label: "SmolLM2-135M/"},
		{name: "shards", files: shards, kind: "checkpoint", read: []int{0, 1, 2, 3, 4}, bufs: shards, src: shards, label: "Hugging Face folder/"},
		{name: "folder without tokenizer", files: []string{"model.safetensors", "config.json"}, kind: "checkpoint", read: []int{0, 1}, bufs: []string{"model.safetensors", "config.json"}, src: []string{"model.safetensors", "config.json"}, label: "Hugging Face folder/", notice: "No tokenizer.json"},
		{name: "folder with tokenizer.model", files: []string{"config.json", "tokenizer.model", "model.safetensors", "tokenizer_config.json"}, kind: "checkpoint", read: []int{0, 1, 2, 3}, bufs: []string{"config.json", "tokenizer.model", "model.safetensors", "tokenizer_config.json"}, src: []string{"config.json", "tokenizer.model", "model.safetensors", "tokenizer_config.json"}, label: "Hugging Face folder/"},
		{name: "nothing", err: "no file"},
		{name: "not a sample", files: []string{"notes.txt"}, err: "notes.txt"},
		{name: "config alone", files: []string{"config.json"}, err: "no .safetensors among config.json"},
		{name: "gguf with others", files: []string{"a.gguf", "tokenizer.json"}, err: "a.gguf: open a GGUF file alone"},
		{name: "two ggufs", files: []string{"a.gguf", "b.gguf"}, err: "a.gguf"},
		{name: "no config", files: []string{"model.safetensors", "tokenizer.json"}, err: "config.json is missing"},
		{name: "no index", files: []string{"config.json", "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}, err: "model.safetensors.index.json is missing"},
		{name: "tokenizer config alone", files: []string{"config.json", "model.safetensors", "tokenizer_config.json"}, err: "tokenizer.json is missing"},
		{name: "twice", files: []string{"config.json", "model.safetensors", "config.json"}, err: "config.json: chosen twice"},
		{name: "two bins unpaired", files: []string{"a.bin", "b.bin"}, err: "cannot tell"},
		{name: "unrelated files", files: []string{"a.txt", "b.md", "c.png"}, err: "a.txt, b.md, c.png"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := pickFiles(tc.files, tc.dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want it to say %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Src.Kind != tc.kind || !reflect.DeepEqual(p.Read, tc.read) || !reflect.DeepEqual(p.Bufs, tc.bufs) || !reflect.DeepEqual(p.Src.Files, tc.src) || p.Label != tc.label {
				t.Errorf("picked %+v, source %+v", p, p.Src)
			}
			if tc.kind == "checkpoint" && p.Src.Name != tc.label {
				t.Errorf("source named %q, want %q", p.Src.Name, tc.label)
			}
			if (tc.notice == "") != (p.Notice == "") || !strings.Contains(p.Notice, tc.notice) {
				t.Errorf("notice %q, want %q", p.Notice, tc.notice)
			}
		})
	}
}

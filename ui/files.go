package ui

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/haeols/haeols/core/model/hf"
	"github.com/haeols/haeols/wire"
)

// picked is how the app reads the files a person chose or dropped
// together: which of them, the worker buffer each goes in, the source, and
// the label of the sample (state.FilePrefix + Label).
type picked struct {
	Src   *wire.Source
	Read  []int    // indices of the files to read, in the order of Bufs
	Bufs  []string // the buffer name of each file read
	Label string
	// Notice is said beside a load that works but lacks something (a
	// folder without tokenizer.json runs on token ids).
	Notice string
}

// hfFile reports whether name is a file of a Hugging Face folder the app
// sends the worker (what core/model/hf reads); the other files of a folder
// (README.md, generation_config.json, …) are left out.
func hfFile(name string) bool {
	switch name {
	case hf.ConfigFile, hf.IndexFile, hf.TokenizerFile, hf.TokenizerModelFile, hf.TokenizerConfigFile:
		return true
	}
	return strings.ToLower(path.Ext(name)) == ".safetensors"
}

// pickFiles says how to read files chosen or dropped together, by their
// names (dir: the folder they came from, when the browser says): one
// sample, llama2.c checkpoint or GGUF file; a llama2.c checkpoint with its
// tokenizer (two .bin files); or the files of a Hugging Face folder
// (config.json, model.safetensors or the index and its shards,
// tokenizer.json or tokenizer.model). An error names the file that is wrong or missing.
func pickFiles(names []string, dir string) (*picked, error) {
	switch {
	case len(names) == 0:
		return nil, fmt.Errorf("no file chosen")
	case len(names) == 1 && names[0] != hf.ConfigFile:
		src, err := fileSource(names[0])
		if err != nil {
			return nil, err
		}
		return &picked{Src: src, Read: []int{0}, Bufs: []string{bufferOf(src, names[0])}, Label: names[0]}, nil
	}
	for _, n := range names {
		if strings.ToLower(path.Ext(n)) == ".gguf" {
			return nil, fmt.Errorf("%s: open a GGUF file alone (it holds the whole model and its tokenizer)", n)
		}
	}
	if len(names) == 2 && !slices.ContainsFunc(names, hfFile) {
		model, tok, err := pairFiles(names[0], names[1])
		if err != nil {
			return nil, err
		}
		src := &wire.Source{Kind: "llama", Name: names[model], Tokenizer: names[tok]}
		return &picked{Src: src, Read: []int{model, tok}, Bufs: []string{"file", "tokenizer"}, Label: names[model]}, nil
	}
	// A Hugging Face folder.
	p := &picked{Src: &wire.Source{Kind: "checkpoint"}}
	var weights []string
	for i, n := range names {
		if !hfFile(n) {
			continue
		}
		if slices.Contains(p.Bufs, n) {
			return nil, fmt.Errorf("%s: chosen twice (pick the files of one folder)", n)
		}
		p.Read, p.Bufs = append(p.Read, i), append(p.Bufs, n)
		if strings.ToLower(path.Ext(n)) == ".safetensors" {
			weights = append(weights, n)
		}
	}
	has := func(n string) bool { return slices.Contains(p.Bufs, n) }
	switch {
	case len(p.Bufs) == 0:
		return nil, fmt.Errorf("%s: open one sample or checkpoint, a llama2.c checkpoint with its tokenizer (two .bin files), or a Hugging Face folder's files together", strings.Join(names, ", "))
	case !has(hf.ConfigFile):
		return nil, fmt.Errorf("%s is missing: open the Hugging Face folder's %s together with %s", hf.ConfigFile, hf.ConfigFile, strings.Join(p.Bufs, ", "))
	case len(weights) == 0:
		return nil, fmt.Errorf("no .safetensors among %s: open the folder's %s (or %s and its shards) with them", strings.Join(names, ", "), hf.WeightsFile, hf.IndexFile)
	case !has(hf.IndexFile) && !has(hf.WeightsFile):
		return nil, fmt.Errorf("%s is missing: a folder of shards (%s) needs its %s", hf.IndexFile, strings.Join(weights, ", "), hf.IndexFile)
	case has(hf.TokenizerConfigFile) && !has(hf.TokenizerFile) && !has(hf.TokenizerModelFile):
		return nil, fmt.Errorf("%s is missing: open it (or %s) with %s (it is the tokenizer)", hf.TokenizerFile, hf.TokenizerModelFile, hf.TokenizerConfigFile)
	case !has(hf.TokenizerFile) && !has(hf.TokenizerModelFile):
		p.Notice = fmt.Sprintf("No %s among your files: the model runs on token ids. Open %s (or %s) with the others to type prompts.", hf.TokenizerFile, hf.TokenizerFile, hf.TokenizerModelFile)
	}
	p.Label = dir
	if p.Label == "" {
		p.Label = "Hugging Face folder"
	}
	p.Label += "/"
	p.Src.Name, p.Src.Files = p.Label, slices.Clone(p.Bufs)
	return p, nil
}

// bufferOf is the worker buffer a single file goes in: its own name for a
// checkpoint, else "file".
func bufferOf(src *wire.Source, name string) string {
	if src.Kind == "checkpoint" {
		return name
	}
	return "file"
}

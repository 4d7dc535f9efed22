package model

import (
	"fmt"
	"os"
	"strings"

	"github.com/haeols/haeols/core/model/gguf"
	"github.com/haeols/haeols/core/model/hf"
	"github.com/haeols/haeols/internal/inputs"
)

// Open reads the checkpoint at path: a GGUF file, or a Hugging Face model
// folder (a directory with config.json). Anything else is refused.
func Open(path string) (*Checkpoint, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("model: %w", err)
	}
	if fi.IsDir() {
		f, err := hf.Open(path)
		if err != nil {
			return nil, err
		}
		ck, err := FromHF(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return ck, nil
	}
	fd, _, err := inputs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model: %s: %w", path, err)
	}
	var magic [4]byte
	n, _ := fd.ReadAt(magic[:], 0)
	fd.Close()
	if string(magic[:n]) != gguf.Magic {
		return nil, fmt.Errorf("model: %s: %w: neither a GGUF file (it starts with %q) nor a Hugging Face folder", path, ErrCheckpoint, magic[:n])
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	ck, err := FromGGUF(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ck, nil
}

// Decode builds a checkpoint from files given by base name, as a browser
// has them: one GGUF file, or the files of a Hugging Face folder
// (config.json, the safetensors, the tokenizer files).
func Decode(files map[string][]byte) (*Checkpoint, error) {
	var ggufs []string
	for name, b := range files {
		if len(b) >= 4 && string(b[:4]) == gguf.Magic {
			ggufs = append(ggufs, name)
		}
	}
	switch {
	case len(ggufs) == 1 && len(files) == 1:
		f, err := gguf.Decode(ggufs[0], files[ggufs[0]])
		if err != nil {
			return nil, err
		}
		ck, err := FromGGUF(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ggufs[0], err)
		}
		return ck, nil
	case len(ggufs) > 0:
		return nil, fmt.Errorf("model: %w: give one GGUF file alone (got %s among %d files)", ErrCheckpoint, strings.Join(ggufs, ", "), len(files))
	}
	f, err := hf.Decode(files)
	if err != nil {
		return nil, err
	}
	return FromHF(f)
}

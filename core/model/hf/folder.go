package hf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/haeols/haeols/core/model/quant"
	"github.com/haeols/haeols/core/safetensors"
	"github.com/haeols/haeols/internal/inputs"
)

// The files of a folder this package reads and writes.
const (
	ConfigFile          = "config.json"
	WeightsFile         = "model.safetensors"
	IndexFile           = "model.safetensors.index.json"
	TokenizerFile       = "tokenizer.json"
	TokenizerConfigFile = "tokenizer_config.json"
	TokenizerModelFile  = "tokenizer.model"
)

// Limits on the small files and the shards.
const (
	MaxConfigBytes    = 1 << 20
	MaxIndexBytes     = 64 << 20
	MaxTokenizerBytes = 64 << 20
	MaxShards         = 1 << 10
)

// ErrFolder is wrapped by every error about a folder's files that do not
// fit together.
var ErrFolder = errors.New("not a valid Hugging Face model folder")

// Folder is a model folder: its config, its tensors from every shard, and
// the tokenizer files (nil when absent): tokenizer.json, or a
// SentencePiece tokenizer.model, and tokenizer_config.json.
type Folder struct {
	Config *Config
	// Tensors in name order.
	Tensors         []*safetensors.Tensor
	Tokenizer       []byte
	TokenizerModel  []byte
	TokenizerConfig []byte

	byName map[string]*safetensors.Tensor
}

// Tensor returns the tensor named name.
func (f *Folder) Tensor(name string) (*safetensors.Tensor, bool) {
	t, ok := f.byName[name]
	return t, ok
}

// shardName reports whether file is a plain safetensors file name: ASCII
// letters, digits, '_', '.' and '-', not starting with '.' or '-' (no
// directories, no ".."), ending in ".safetensors" after at least one
// character.
func shardName(file string) bool {
	base, ok := strings.CutSuffix(file, ".safetensors")
	if !ok || base == "" || base[0] == '.' || base[0] == '-' {
		return false
	}
	for _, c := range []byte(base) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// index is model.safetensors.index.json.
type index struct {
	Metadata  map[string]any    `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

func parseIndex(data []byte) (*index, []string, error) {
	var ix index
	if err := json.Unmarshal(data, &ix); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrFolder, IndexFile, err)
	}
	if len(ix.WeightMap) == 0 {
		return nil, nil, fmt.Errorf("%w: %s has no weight_map", ErrFolder, IndexFile)
	}
	seen := map[string]bool{}
	var shards []string
	for name, file := range ix.WeightMap {
		if !shardName(file) {
			return nil, nil, fmt.Errorf("%w: %s: tensor %s is in %q, not a plain .safetensors file name", ErrFolder, IndexFile, name, file)
		}
		if !seen[file] {
			seen[file] = true
			shards = append(shards, file)
		}
	}
	if len(shards) > MaxShards {
		return nil, nil, fmt.Errorf("%w: %s names %d shards, more than %d", ErrFolder, IndexFile, len(shards), MaxShards)
	}
	sort.Strings(shards)
	return &ix, shards, nil
}

// assemble checks the shards against the index (nil for one
// model.safetensors) and the dtypes, and builds the Folder.
func assemble(cfg *Config, ix *index, shards map[string]*safetensors.File) (*Folder, error) {
	f := &Folder{Config: cfg, byName: map[string]*safetensors.Tensor{}}
	names := make([]string, 0, len(shards))
	for n := range shards {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, file := range names {
		for _, t := range shards[file].Tensors {
			if ix != nil {
				if want, ok := ix.WeightMap[t.Name]; !ok {
					return nil, fmt.Errorf("%w: tensor %s in %s is not in %s", ErrFolder, t.Name, file, IndexFile)
				} else if want != file {
					return nil, fmt.Errorf("%w: tensor %s is in %s, %s says %s", ErrFolder, t.Name, file, IndexFile, want)
				}
			}
			if _, dup := f.byName[t.Name]; dup {
				return nil, fmt.Errorf("%w: tensor %s is in two shards", ErrFolder, t.Name)
			}
			if _, err := WeightType(t.DType); err != nil {
				return nil, fmt.Errorf("%w: tensor %s in %s: %v", ErrFolder, t.Name, file, err)
			}
			f.byName[t.Name] = t
			f.Tensors = append(f.Tensors, t)
		}
	}
	if ix != nil {
		for name, file := range ix.WeightMap {
			if _, ok := f.byName[name]; !ok {
				return nil, fmt.Errorf("%w: %s lists tensor %s in %s, which does not hold it", ErrFolder, IndexFile, name, file)
			}
		}
	}
	sort.Slice(f.Tensors, func(i, j int) bool { return f.Tensors[i].Name < f.Tensors[j].Name })
	return f, nil
}

// WeightType is the quant type of a safetensors weight dtype: F32, F16 or
// BF16; others are refused by name.
func WeightType(dtype string) (quant.Type, error) {
	switch dtype {
	case "F32":
		return quant.F32, nil
	case "F16":
		return quant.F16, nil
	case "BF16":
		return quant.BF16, nil
	}
	return 0, fmt.Errorf("dtype %s is not supported for weights (supported: F32, F16, BF16)", dtype)
}

// Floats decodes a F32, F16 or BF16 tensor to float32.
func Floats(t *safetensors.Tensor) ([]float32, error) {
	typ, err := WeightType(t.DType)
	if err != nil {
		return nil, fmt.Errorf("hf: tensor %s: %w", t.Name, err)
	}
	out := make([]float32, t.Elements())
	if err := quant.Dequantize(typ, out, t.Data); err != nil {
		return nil, fmt.Errorf("hf: tensor %s: %w", t.Name, err)
	}
	return out, nil
}

// Decode builds a folder from its files, given by base name (config.json,
// model.safetensors or model.safetensors.index.json and its shards,
// optionally tokenizer.json, tokenizer.model and tokenizer_config.json). Other files are
// ignored. Tensor data alias the given bytes.
func Decode(files map[string][]byte) (*Folder, error) {
	cb, ok := files[ConfigFile]
	if !ok {
		return nil, fmt.Errorf("hf: %w: no %s", ErrFolder, ConfigFile)
	}
	if len(cb) > MaxConfigBytes {
		return nil, fmt.Errorf("hf: %w: %s is %d bytes, more than %d", ErrFolder, ConfigFile, len(cb), MaxConfigBytes)
	}
	cfg, err := ParseConfig(cb)
	if err != nil {
		return nil, fmt.Errorf("hf: %s: %w", ConfigFile, err)
	}
	var ix *index
	names := []string{WeightsFile}
	if ib, ok := files[IndexFile]; ok {
		if len(ib) > MaxIndexBytes {
			return nil, fmt.Errorf("hf: %w: %s is %d bytes, more than %d", ErrFolder, IndexFile, len(ib), MaxIndexBytes)
		}
		if ix, names, err = parseIndex(ib); err != nil {
			return nil, fmt.Errorf("hf: %w", err)
		}
	}
	shards := map[string]*safetensors.File{}
	for _, n := range names {
		b, ok := files[n]
		if !ok {
			return nil, fmt.Errorf("hf: %w: %s is missing", ErrFolder, n)
		}
		if shards[n], err = safetensors.Decode(n, b); err != nil {
			return nil, fmt.Errorf("hf: %w", err)
		}
	}
	f, err := assemble(cfg, ix, shards)
	if err != nil {
		return nil, fmt.Errorf("hf: %w", err)
	}
	f.Tokenizer, f.TokenizerModel, f.TokenizerConfig = files[TokenizerFile], files[TokenizerModelFile], files[TokenizerConfigFile]
	if len(f.Tokenizer) > MaxTokenizerBytes || len(f.TokenizerModel) > MaxTokenizerBytes || len(f.TokenizerConfig) > MaxTokenizerBytes {
		return nil, fmt.Errorf("hf: %w: tokenizer files over %d bytes", ErrFolder, MaxTokenizerBytes)
	}
	return f, nil
}

// Open reads the model folder dir. Only regular files are read; each
// shard's header is checked against its size before its data is read.
func Open(dir string) (*Folder, error) {
	small := func(name string, limit int64, optional bool) ([]byte, error) {
		b, err := inputs.ReadFile(filepath.Join(dir, name), limit)
		if optional && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("hf: %s: %w", filepath.Join(dir, name), err)
		}
		return b, nil
	}
	cb, err := small(ConfigFile, MaxConfigBytes, false)
	if err != nil {
		return nil, err
	}
	cfg, err := ParseConfig(cb)
	if err != nil {
		return nil, fmt.Errorf("hf: %s: %w", filepath.Join(dir, ConfigFile), err)
	}
	ib, err := small(IndexFile, MaxIndexBytes, true)
	if err != nil {
		return nil, err
	}
	var ix *index
	names := []string{WeightsFile}
	if ib != nil {
		if ix, names, err = parseIndex(ib); err != nil {
			return nil, fmt.Errorf("hf: %s: %w", dir, err)
		}
	}
	shards := map[string]*safetensors.File{}
	for _, n := range names {
		if shards[n], err = safetensors.Open(filepath.Join(dir, n)); err != nil {
			return nil, fmt.Errorf("hf: %w", err)
		}
	}
	f, err := assemble(cfg, ix, shards)
	if err != nil {
		return nil, fmt.Errorf("hf: %s: %w", dir, err)
	}
	if f.Tokenizer, err = small(TokenizerFile, MaxTokenizerBytes, true); err != nil {
		return nil, err
	}
	if f.TokenizerModel, err = small(TokenizerModelFile, MaxTokenizerBytes, true); err != nil {
		return nil, err
	}
	if f.TokenizerConfig, err = small(TokenizerConfigFile, MaxTokenizerBytes, true); err != nil {
		return nil, err
	}
	return f, nil
}

// Write creates the model folder dir (which must not exist) holding cfg
// as config.json, the tensors in name order as model.safetensors or, when
// they exceed shardBytes > 0, as shards model-0000i-of-0000n.safetensors
// of at most shardBytes each (a larger tensor gets a shard of its own)
// with model.safetensors.index.json, and the tokenizer files when not nil.
// The folder is built under a temporary name beside dir and renamed into
// place, so dir never holds a partial folder.
func Write(dir string, f *Folder, shardBytes int64) (err error) {
	if err := f.Config.Validate(); err != nil {
		return fmt.Errorf("hf: write %s: %w", dir, err)
	}
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("hf: write %s: already exists", dir)
	}
	ts := append([]*safetensors.Tensor(nil), f.Tensors...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Name < ts[j].Name })
	for i, t := range ts {
		if i > 0 && ts[i-1].Name == t.Name {
			return fmt.Errorf("hf: write %s: tensor %s twice", dir, t.Name)
		}
		if _, err := WeightType(t.DType); err != nil {
			return fmt.Errorf("hf: write %s: tensor %s: %w", dir, t.Name, err)
		}
	}
	var groups [][]*safetensors.Tensor
	var size int64
	for _, t := range ts {
		n := int64(len(t.Data))
		if len(groups) == 0 || shardBytes > 0 && size+n > shardBytes && size > 0 {
			groups, size = append(groups, nil), 0
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], t)
		size += n
	}
	if len(groups) == 0 {
		groups = [][]*safetensors.Tensor{nil}
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return fmt.Errorf("hf: write %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	put := func(name string, b []byte) error {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			return fmt.Errorf("hf: write %s: %w", dir, err)
		}
		return nil
	}
	cb, err := json.MarshalIndent(f.Config, "", "  ")
	if err != nil {
		return fmt.Errorf("hf: write %s: %w", dir, err)
	}
	if err := put(ConfigFile, append(cb, '\n')); err != nil {
		return err
	}
	ix := index{Metadata: map[string]any{}, WeightMap: map[string]string{}}
	var total int64
	for i, g := range groups {
		name := WeightsFile
		if len(groups) > 1 {
			name = fmt.Sprintf("model-%05d-of-%05d.safetensors", i+1, len(groups))
		}
		var buf bytes.Buffer
		if err := safetensors.Write(&buf, map[string]string{"format": "pt"}, g); err != nil {
			return fmt.Errorf("hf: write %s: %w", dir, err)
		}
		if err := put(name, buf.Bytes()); err != nil {
			return err
		}
		for _, t := range g {
			ix.WeightMap[t.Name] = name
			total += int64(len(t.Data))
		}
	}
	if len(groups) > 1 {
		ix.Metadata["total_size"] = total
		b, err := json.MarshalIndent(ix, "", "  ")
		if err != nil {
			return fmt.Errorf("hf: write %s: %w", dir, err)
		}
		if err := put(IndexFile, append(b, '\n')); err != nil {
			return err
		}
	}
	for name, b := range map[string][]byte{TokenizerFile: f.Tokenizer, TokenizerModelFile: f.TokenizerModel, TokenizerConfigFile: f.TokenizerConfig} {
		if b != nil {
			if err := put(name, b); err != nil {
				return err
			}
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("hf: write %s: %w", dir, err)
	}
	return nil
}

// NewTensor encodes float32 values x of the given row-major shape as a
// tensor of dtype F32, F16 or BF16 (rounded to nearest even).
func NewTensor(name, dtype string, shape []int, x []float32) (*safetensors.Tensor, error) {
	typ, err := WeightType(dtype)
	if err != nil {
		return nil, fmt.Errorf("hf: tensor %s: %w", name, err)
	}
	n := 1
	for _, d := range shape {
		n *= d
	}
	if n != len(x) {
		return nil, fmt.Errorf("hf: tensor %s: shape %v holds %d elements, have %d", name, shape, n, len(x))
	}
	b, err := quant.Quantize(typ, x)
	if err != nil {
		return nil, fmt.Errorf("hf: tensor %s: %w", name, err)
	}
	return &safetensors.Tensor{Name: name, DType: dtype, Shape: append([]int(nil), shape...), Data: b}, nil
}

package model

import (
	"fmt"
	"sort"
	"strings"

	"github.com/haeols/haeols/core/model/quant"
)

// Summary describes a checkpoint without running it (for haeols info and
// for a capture's metadata).
type Summary struct {
	Config Config
	// Params is the number of weights; Bytes their size as stored.
	Params, Bytes int64
	// Types counts the weights of each type, most weights first.
	Types []TypeCount
	// Tokenizer is "none" or e.g. "byte-level BPE (llama-bpe), 128256 tokens".
	Tokenizer string
}

// TypeCount is how many weights (tensors) of a type a checkpoint holds and
// how many elements they have.
type TypeCount struct {
	Type     quant.Type
	Tensors  int
	Elements int64
}

// Quantization names the stored types, most elements first ("Q4_K+Q6_K+F32",
// "F32").
func (s *Summary) Quantization() string {
	names := make([]string, len(s.Types))
	for i, tc := range s.Types {
		names[i] = tc.Type.String()
	}
	return strings.Join(names, "+")
}

// Summarize describes c.
func (c *Checkpoint) Summarize() *Summary {
	s := &Summary{Config: c.Config, Tokenizer: "none"}
	counts := map[quant.Type]*TypeCount{}
	for _, w := range c.Weights {
		n := int64(w.Rows) * int64(w.Cols)
		s.Params += n
		s.Bytes += int64(len(w.Data))
		tc := counts[w.Type]
		if tc == nil {
			tc = &TypeCount{Type: w.Type}
			counts[w.Type] = tc
		}
		tc.Tensors++
		tc.Elements += n
	}
	for _, tc := range counts {
		s.Types = append(s.Types, *tc)
	}
	sort.Slice(s.Types, func(i, j int) bool {
		if s.Types[i].Elements != s.Types[j].Elements {
			return s.Types[i].Elements > s.Types[j].Elements
		}
		return s.Types[i].Type < s.Types[j].Type
	})
	if tk := c.Tokenizer; tk != nil {
		s.Tokenizer = fmt.Sprintf("%v, %d tokens", tk.Kind(), tk.Vocab())
		if tk.Pre() != 0 {
			s.Tokenizer = fmt.Sprintf("%v (%v), %d tokens", tk.Kind(), tk.Pre(), tk.Vocab())
		}
	}
	return s
}

// String is the summary as lines for people.
func (s *Summary) String() string {
	c := s.Config
	var b strings.Builder
	fmt.Fprintf(&b, "architecture %s: %d layers, width %d, feed-forward %d, %d query heads and %d KV heads of %d, vocabulary %d, context %d\n",
		c.Arch, c.Layers, c.Dim, c.FFN, c.Heads, c.KVHeads, c.HeadDim, c.Vocab, c.Context)
	rope := fmt.Sprintf("RoPE base %g", c.RopeTheta)
	if c.RopeFactors != nil {
		rope += " with Llama 3.1 frequency factors"
	}
	var extras []string
	if c.QKVBias {
		extras = append(extras, "q/k/v biases")
	}
	if c.OutputBias {
		extras = append(extras, "output bias")
	}
	if c.QKNorm {
		extras = append(extras, "q/k RMSNorm")
	}
	if c.Tied {
		extras = append(extras, "tied embeddings")
	}
	fmt.Fprintf(&b, "%s, RMSNorm eps %g", rope, float32(c.RMSEps))
	if len(extras) > 0 {
		fmt.Fprintf(&b, ", %s", strings.Join(extras, ", "))
	}
	fmt.Fprintf(&b, "\n%d parameters in %d bytes:", s.Params, s.Bytes)
	for _, tc := range s.Types {
		fmt.Fprintf(&b, " %s %d tensors (%d elements);", tc.Type, tc.Tensors, tc.Elements)
	}
	fmt.Fprintf(&b, "\ntokenizer: %s\n", s.Tokenizer)
	return b.String()
}

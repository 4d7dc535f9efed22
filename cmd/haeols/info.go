package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/sample"
	"github.com/haeols/haeols/internal/termsafe"
)

const infoUsage = `
Usage: haeols info [FILE]

Describes a sample: tensor shapes and dtype, the prefix/probe split, the
logit scale, the metadata, the needles and a preview of the tokens. For a
model checkpoint (a GGUF file or a Hugging Face folder), describes the
model without running it: architecture, sizes, RoPE, the weights' types
and the tokenizer.

Example:
  haeols info samples/default.safetensors
`

func cmdInfo(e *env, args []string) error {
	fs := newFlags("info")
	pos, err := parse(e, fs, args, infoUsage, 1)
	if err != nil {
		return err
	}
	if len(pos) == 1 && isCheckpoint(pos[0]) {
		ck, err := model.Open(pos[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%-12s %s (checkpoint)\n", "file", quotePath(pos[0]))
		for _, line := range strings.SplitAfter(ck.Summarize().String(), "\n") {
			fmt.Fprint(e.stdout, termsafe.String(strings.TrimSuffix(line, "\n")))
			if strings.HasSuffix(line, "\n") {
				fmt.Fprintln(e.stdout)
			}
		}
		return nil
	}
	s, name, err := loadSample(e, pos)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%-12s %s", "file", quotePath(name))
	if len(pos) == 1 {
		if fi, err := os.Stat(pos[0]); err == nil {
			fmt.Fprintf(e.stdout, " (%s)", byteSize(fi.Size()))
		}
	}
	fmt.Fprintln(e.stdout)
	fmt.Fprint(e.stdout, sample.Summary(s))
	return nil
}

// byteSize formats a size in bytes for people.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

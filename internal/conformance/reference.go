package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// NodeDir is the folder of the references' npm package, relative to this
// package: its node_modules is made by `make conformance-deps`.
const NodeDir = "testdata/node"

// ErrNoReference is wrapped when the references are not installed.
var ErrNoReference = errors.New("the conformance references are not installed (run `make conformance-deps`)")

// References finds node and the installed npm packages under dir (NodeDir
// or an absolute path to it) and returns dir made absolute and the path of
// ggml's base library that node-llama-cpp ships for this platform.
func References(dir string) (abs, libggml string, err error) {
	if abs, err = filepath.Abs(dir); err != nil {
		return "", "", fmt.Errorf("conformance: %w", err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		return "", "", fmt.Errorf("conformance: %w: node: %w", ErrNoReference, err)
	}
	plat := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	lib := filepath.Join(abs, "node_modules", "@node-llama-cpp", runtime.GOOS+"-"+plat, "bins", runtime.GOOS+"-"+plat, "libggml-base.so")
	if _, err := os.Stat(lib); err != nil {
		return "", "", fmt.Errorf("conformance: %w: %w", ErrNoReference, err)
	}
	return abs, lib, nil
}

// Node runs script (a file of dir) with req as its JSON standard input and
// decodes its JSON standard output into resp.
func Node(dir, script string, req, resp any) error {
	cmd := exec.Command("node", filepath.Join(dir, script))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NODE_LLAMA_CPP_SKIP_DOWNLOAD=true")
	return runJSON(cmd, "node "+script, req, resp)
}

// SentencePiece finds a Python with the sentencepiece library (Debian's
// python3-sentencepiece: /usr/bin/python3 first, then python3 on PATH) and
// returns its path.
func SentencePiece() (string, error) {
	var tried []string
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		path, err := exec.LookPath(py)
		if err != nil {
			continue
		}
		out, err := exec.Command(path, "-c", "import sentencepiece").CombinedOutput()
		if err == nil {
			return path, nil
		}
		tried = append(tried, fmt.Sprintf("%s: %s", path, strings.TrimSpace(string(out))))
	}
	return "", fmt.Errorf("conformance: no python3 with sentencepiece (apt-get install python3-sentencepiece): %s", strings.Join(tried, "; "))
}

// Python runs script (a file of dir) with the Python python, req as its
// JSON standard input, and decodes its JSON standard output into resp.
func Python(python, dir, script string, req, resp any) error {
	cmd := exec.Command(python, filepath.Join(dir, script))
	cmd.Dir = dir
	return runJSON(cmd, python+" "+script, req, resp)
}

// runJSON runs cmd (named name in errors) with req as JSON on its standard
// input and decodes its standard output into resp.
func runJSON(cmd *exec.Cmd, name string, req, resp any) error {
	in, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("conformance: %s: %w", name, err)
	}
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("conformance: %s: %w: %s", name, err, strings.TrimSpace(stderr.String()))
	}
	if err := json.Unmarshal(stdout.Bytes(), resp); err != nil {
		return fmt.Errorf("conformance: %s: output: %w (stderr: %s)", name, err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// LlamaRequest is llamacpp.mjs's input.
type LlamaRequest struct {
	Model         string   `json:"model"`
	Prompts       [][]int  `json:"prompts,omitempty"`
	Greedy        int      `json:"greedy,omitempty"`
	Tokenize      []string `json:"tokenize,omitempty"`
	SpecialTokens bool     `json:"specialTokens,omitempty"`
	VocabOnly     bool     `json:"vocabOnly,omitempty"`
	Threads       int      `json:"threads,omitempty"`
}

// LlamaResponse is llamacpp.mjs's output: per prompt llama.cpp's
// next-token distribution at every position and its greedy continuation,
// and per text its token ids.
type LlamaResponse struct {
	Prompts []struct {
		Probs  [][]float64 `json:"probs"`
		Greedy []int       `json:"greedy"`
	} `json:"prompts"`
	Tokens [][]int `json:"tokens"`
}

// Softmax returns the distribution of logits, in float64.
func Softmax(logits []float32) []float64 {
	m := math.Inf(-1)
	for _, v := range logits {
		m = math.Max(m, float64(v))
	}
	p := make([]float64, len(logits))
	var s float64
	for i, v := range logits {
		p[i] = math.Exp(float64(v) - m)
		s += p[i]
	}
	for i := range p {
		p[i] /= s
	}
	return p
}

// KL returns the Kullback-Leibler divergence KL(p ‖ q) in nats, each of p
// and q first scaled to sum to 1 (llama.cpp's probabilities arrive as
// float32 values, whose sum is 1 only to about 1e-6, which would otherwise
// add that much to a divergence of 1e-10). Entries where p is 0 add
// nothing, and a q of 0 where p is not counts as 1e-300.
func KL(p, q []float64) float64 {
	var sp, sq float64
	for i := range p {
		sp += p[i]
		sq += q[i]
	}
	var s float64
	for i, pi := range p {
		if pi > 0 {
			s += pi / sp * (math.Log(pi/sp) - math.Log(math.Max(q[i]/sq, 1e-300)))
		}
	}
	return math.Max(s, 0)
}

// Argmax is the index of the largest value, the first of equals.
func Argmax(p []float64) int {
	b := 0
	for i, v := range p {
		if v > p[b] {
			b = i
		}
	}
	return b
}

package gen_test

import (
	"fmt"
	"strings"

	"github.com/haeols/haeols/core/gen"
)

func ExampleGenerate() {
	c, err := gen.DefaultConfig("tiny")
	if err != nil {
		panic(err)
	}
	c.Seed = 7
	s, err := gen.Generate(c)
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Meta.Source)
	fmt.Printf("q %dx%dx%dx%d, k and v %dx%dx%dx%d, prefix %d\n", s.L, s.H, s.N, s.D, s.L, s.HKV, s.N, s.D, s.Prefix())
	first, last := s.Meta.Needles[0], s.Meta.Needles[len(s.Meta.Needles)-1]
	fmt.Printf("needle at %v: %s\n", s.Meta.Needles, strings.Join(s.Meta.Tokens[first-3:last+2], " "))
	var asks []string
	for _, i := range s.Meta.NeedleProbes {
		asks = append(asks, s.Meta.Tokens[s.Prefix()+i])
	}
	fmt.Println("probes asking for it:", strings.Join(asks, ", "))
	fmt.Println("head kinds:", s.Meta.Extra["head_kinds"])
	// Output:
	// generator tiny seed=7 L=1 H=2 Hkv=1 N=64 n=56 d=16 needles=1 rope_base=10000 gen=v1
	// q 1x2x64x16, k and v 1x1x64x16, prefix 56
	// needle at [25 26]: the passkey is 0 9 .
	// probes asking for it: passkey, passkey, is
	// head kinds: [["local","retrieval"]]
}

func ExamplePresets() {
	for _, p := range gen.Presets() {
		c, _ := gen.DefaultConfig(p.Name)
		fmt.Printf("%-9s L=%d H=%d Hkv=%d N=%d d=%d\n", p.Name, c.Layers, c.Heads, c.KVHeads, c.Tokens, c.Dim)
	}
	// Output:
	// default   L=4 H=4 Hkv=1 N=1024 d=64
	// needle    L=2 H=4 Hkv=1 N=2048 d=64
	// induction L=2 H=4 Hkv=1 N=1024 d=64
	// diffuse   L=2 H=4 Hkv=1 N=1024 d=64
	// local     L=2 H=4 Hkv=1 N=1024 d=64
	// tiny      L=1 H=2 Hkv=1 N=64 d=16
}

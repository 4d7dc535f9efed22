package sample

import (
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	tests := []struct {
		name string
		s    func() *Sample
		want []string
		not  []string
	}{
		{"attention only, defaults", func() *Sample {
			s := testSample(2, 3, 0, 100, 0, false, true)
			s.SourceDType = "F16"
			return s
		}, []string{
			"shape        L=2 layers, H=3 heads, N=100 positions\n",
			"tensors      attn [2 3 100 100] (attention only: methods that need K and V are unavailable)\n",
			"dtype        F16 (as stored; held as float32)\n",
			"prefix       n=88 cached positions + 12 probe queries (default N - min(64, N/8))\n",
			"scale        none (attention only)\n",
			"tokens       none\n",
		}, []string{"model", "needles", "meta "}},
		{"full metadata", func() *Sample {
			s := testSample(1, 2, 1, 8, 4, true, true)
			s.Meta = fullMeta()
			s.SourceDType = "attn=F32 k=F16 q=F16 v=F16"
			return s
		}, []string{
			"model        test <model> & co\n",
			"source       generator needle seed=7\n",
			"shape        L=1 layers, H=2 query heads, Hkv=1 KV heads (group 2), N=8 positions, d=4\n",
			"tensors      q [1 2 8 4], k [1 1 8 4], v [1 1 8 4], attn [1 2 8 8]\n",
			"dtype        attn=F32 k=F16 q=F16 v=F16",
			"prefix       n=6 cached positions + 2 probe queries (from metadata)\n",
			"scale        0.123457 (from metadata)\n",
			`tokens       8: "<s>" " Once" " upon" "\n" "" "a" "\t" "é"` + "\n",
			"needles      2 at positions [1 5]; 2 probe queries ask for them: [0 1]\n",
			"meta         a = \"1\"\nmeta         b = \"2\"\nmeta         z.y = \"\"\nmeta         é = \"x\"\n",
		}, nil},
		{"many tokens and needles are cut", func() *Sample {
			s := testSample(1, 1, 1, 64, 2, true, false)
			s.Meta.Tokens = make([]string, 64)
			for i := range 20 {
				s.Meta.Needles = append(s.Meta.Needles, i)
			}
			return s
		}, []string{`tokens       64: "" "" "" "" "" "" "" "" ...`, "[0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 ... (20 in all)]"}, nil},
		{"malformed sample does not panic", func() *Sample {
			return &Sample{Q: []float32{1}, K: []float32{1}, V: []float32{1}, H: 2}
		}, []string{"(group ?)"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summary(tt.s())
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Summary lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(got, w) {
					t.Errorf("Summary has %q:\n%s", w, got)
				}
			}
		})
	}
}

package gen

import "testing"

// BenchmarkGenerateDefault times Generate on the default preset (the sample
// the browser makes on demand).
func BenchmarkGenerateDefault(b *testing.B) {
	c, err := DefaultConfig("default")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Generate(c); err != nil {
			b.Fatal(err)
		}
	}
}

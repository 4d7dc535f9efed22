package safetensors

import "testing"

// TestCheckSurrogates checks the escapes that checkJSON lets pass: pairs,
// an escaped backslash before a u, and other escapes; lone surrogates are
// refused.
func TestCheckSurrogates(t *testing.T) {
	for _, ok := range []string{`"\ud83d\ude00"`, `"\\ud800"`, `"\u00e9\n\"\\"`, `"\uD83D\uDE00x"`, `"\\\\"`} {
		if err := checkSurrogates([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{`"\ud83d"`, `"\ud83dx"`, `"\ud83d\u0041"`, `"\ude00"`, `"\\\ud800"`} {
		if err := checkSurrogates([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

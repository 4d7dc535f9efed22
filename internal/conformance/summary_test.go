package conformance

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
)

// tally counts the comparisons the tests made, for the summary line that
// TestMain prints last.
var tally struct {
	sync.Mutex
	fixtures, tokenizers []string
	badFixtures, badTok  []string
}

// record notes one fixture (tokenizer false) or tokenizer comparison and
// whether it was within tolerance (a tokenizer: gave the same ids).
func record(name string, tokenizer, ok bool) {
	tally.Lock()
	defer tally.Unlock()
	if tokenizer {
		tally.tokenizers = append(tally.tokenizers, name)
		if !ok {
			tally.badTok = append(tally.badTok, name)
		}
		return
	}
	tally.fixtures = append(tally.fixtures, name)
	if !ok {
		tally.badFixtures = append(tally.badFixtures, name)
	}
}

// TestMain runs the tests and prints `conformance: N fixtures, ...` as the
// last line when any comparison ran.
func TestMain(m *testing.M) {
	code := m.Run()
	if len(tally.fixtures)+len(tally.tokenizers) > 0 {
		part := func(n int, what string, bad []string, good string) string {
			if len(bad) == 0 {
				return fmt.Sprintf("%d %s, %s", n, what, good)
			}
			return fmt.Sprintf("%d %s, %d outside tolerance: %s", n, what, len(bad), strings.Join(bad, ", "))
		}
		fmt.Printf("conformance: %s; %s\n",
			part(len(tally.fixtures), "fixtures", tally.badFixtures, "all within tolerance"),
			part(len(tally.tokenizers), "tokenizer comparisons", tally.badTok, "all agree"))
	}
	os.Exit(code)
}

package gpu

import (
	"reflect"
	"strings"
	"testing"
)

// TestOmitSet: every step part sets its own flag and no other, the groups
// their three kernels, and an unknown name is an error listing the parts.
func TestOmitSet(t *testing.T) {
	count := func(o stepOmit) int {
		n := 0
		v := reflect.ValueOf(o)
		for i := range v.NumField() {
			if v.Field(i).Bool() {
				n++
			}
		}
		return n
	}
	seen := map[stepOmit]string{}
	for _, p := range StepParts() {
		o, err := omitSet([]string{p})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if count(o) != 1 {
			t.Errorf("%s sets %d flags, want 1", p, count(o))
		}
		if q, dup := seen[o]; dup {
			t.Errorf("%s and %s set the same flag", p, q)
		}
		seen[o] = p
	}
	if n := reflect.ValueOf(stepOmit{}).NumField(); len(seen) != n {
		t.Errorf("StepParts names %d parts, stepOmit has %d flags", len(seen), n)
	}
	for _, g := range []string{"gdn", "attn"} {
		if o, err := omitSet([]string{g}); err != nil || count(o) != 3 {
			t.Errorf("group %s: %d flags, %v", g, count(o), err)
		}
	}
	if _, err := omitSet([]string{"ffn", "mlp"}); err == nil || !strings.Contains(err.Error(), `"mlp"`) || !strings.Contains(err.Error(), "mixer-mv") {
		t.Errorf("unknown part: %v", err)
	}
	if o, err := omitSet(nil); err != nil || o != (stepOmit{}) {
		t.Errorf("no parts: %+v, %v", o, err)
	}
}

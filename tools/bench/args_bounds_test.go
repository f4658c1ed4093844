package main

import (
	"io"
	"reflect"
	"strings"
	"testing"
)

// TestParseBounds: each bound admits its own value (1 << 20 positions and
// repeats, 65,536 MiB of copy, a context of one position) and names itself
// past it.
func TestParseBounds(t *testing.T) {
	for _, c := range []struct {
		av  []string
		ctx []int
	}{
		{[]string{"-ctx", "1"}, []int{1}},
		{[]string{"-ctx", "1048576"}, []int{1048576}},
		{[]string{"-ctx", "1024k"}, []int{1048576}},
		{[]string{"-ctx", "2k,2048,1"}, []int{1, 2048}},
	} {
		if got := mustParse(t, c.av...).contexts; !reflect.DeepEqual(got, c.ctx) {
			t.Errorf("%q: contexts %v, want %v", c.av, got, c.ctx)
		}
	}
	c := mustParse(t, "-reps", "1048576", "-warmup", "1048576", "-tokens", "1048576", "-prompt", "1048576", "-profile", "1048576", "-copy-mib", "65536")
	if c.reps != 1<<20 || c.warmup != 1<<20 || c.tokens != 1<<20 || c.prompt != 1<<20 || c.profile != 1<<20 || c.copyMiB != 65536 {
		t.Errorf("at the bounds: %+v", c)
	}
	if _, err := parseArgs([]string{"-ctx", "2000k"}, io.Discard); err == nil || !strings.Contains(err.Error(), "2000k is more than 1048576 positions (1024k), more than any model here holds") {
		t.Errorf("-ctx 2000k: %v", err)
	}
	if _, err := parseArgs([]string{"-ctx", "1048577"}, io.Discard); err == nil || !strings.Contains(err.Error(), "1048577 is more than 1048576 positions") {
		t.Errorf("-ctx 1048577: %v", err)
	}
}

// TestParseCombinations: flags that agree pass: -fp8 with -kv fp8, a run
// with -compare OLD.json (no NEW.json: a run's flags are used), and a
// preset added to a -model with the default types.
func TestParseCombinations(t *testing.T) {
	if c := mustParse(t, "-fp8", "-kv", "fp8"); !reflect.DeepEqual(c.kv, []string{"fp8"}) {
		t.Errorf("-fp8 -kv fp8: kv %v", c.kv)
	}
	if c := mustParse(t, "-compare", "old.json", "-model", "x.gguf", "-reps", "3"); c.compare != "old.json" || c.compareTo != "" || c.reps != 3 {
		t.Errorf("a run with -compare: %+v", c)
	}
	var labels []string
	mp := mustParse(t, "-model", "x.gguf", "-preset", "9b")
	for _, j := range mp.jobs() {
		labels = append(labels, j.label)
	}
	if got := strings.Join(labels, " "); got != "x synth-9b-bf16 synth-9b-q8_0" {
		t.Errorf("-model x.gguf -preset 9b: jobs %s", got)
	}
	for _, av := range [][]string{{"-preset", "9b", "-type", ""}, {"-preset", "", "-type", "q8_0"}} {
		if _, err := parseArgs(av, io.Discard); err == nil || !strings.Contains(err.Error(), "nothing to benchmark") {
			t.Errorf("%q: %v", av, err)
		}
	}
}

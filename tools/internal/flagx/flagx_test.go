package flagx

import (
	"flag"
	"io"
	"reflect"
	"testing"
)

func TestInterspersed(t *testing.T) {
	for _, c := range []struct {
		args []string
		pos  []string
		json bool
		out  string
	}{
		{[]string{"a", "-json", "b"}, []string{"a", "b"}, true, ""},
		{[]string{"-o", "x", "a", "b", "-json"}, []string{"a", "b"}, true, "x"},
		{[]string{"a", "--", "-json", "-o"}, []string{"a", "-json", "-o"}, false, ""},
		{[]string{"-json", "--"}, nil, true, ""},
		// "--" as a flag's value is not the end of the flags.
		{[]string{"-o", "--", "a", "-json"}, []string{"a"}, true, "--"},
		{[]string{"-json", "--", "-o"}, []string{"-o"}, true, ""},
		{nil, nil, false, ""},
		// A value that names a flag is still a value: the "--" after it
		// ends the flags, and "-json" after "a" is an argument.
		{[]string{"-o", "o", "--", "a", "-json"}, []string{"a", "-json"}, false, "o"},
		// "--o" is -o (the flag package takes one or two dashes), so the
		// "--" after it is its value.
		{[]string{"--o", "--", "a", "-json"}, []string{"a"}, true, "--"},
		// A boolean flag takes no value: the "--" after it ends the flags.
		{[]string{"-json", "--", "a", "-o", "x"}, []string{"a", "-o", "x"}, true, ""},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		json := fs.Bool("json", false, "")
		out := fs.String("o", "", "")
		pos, err := Interspersed(fs, c.args, fs.Parse)
		if err != nil || !reflect.DeepEqual(pos, c.pos) || *json != c.json || *out != c.out {
			t.Errorf("%q: pos %q json %v o %q err %v; want %q %v %q", c.args, pos, *json, *out, err, c.pos, c.json, c.out)
		}
	}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if _, err := Interspersed(fs, []string{"a", "-nope"}, fs.Parse); err == nil {
		t.Error("an unknown flag after an argument was accepted")
	}
}

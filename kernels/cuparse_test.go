package kernels

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// cuKernel is one `extern "C" __global__ void` definition found in a .cu file.
type cuKernel struct {
	Name         string
	File         string
	Params       []Param
	LaunchBounds string // the __launch_bounds__ argument as written ("" when absent)
}

// token kinds of the tiny C scanner
const (
	tIdent = iota
	tString
	tPunct
	tNumber
)

type cuToken struct {
	kind int
	text string
}

// cuTokens splits C source into identifiers, numbers, string literals and
// single-character punctuation, dropping comments and preprocessor lines.
func cuTokens(src string) ([]cuToken, error) {
	var toks []cuToken
	lineStart := true
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case lineStart && c == '#':
			// preprocessor line (with backslash continuations)
			for i < len(src) && src[i] != '\n' {
				if src[i] == '\\' && i+1 < len(src) && src[i+1] == '\n' {
					i++
				}
				i++
			}
			continue
		}
		lineStart = false
		switch {
		case strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unterminated comment at byte %d", i)
			}
			i += end + 4
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) {
				return nil, fmt.Errorf("unterminated literal at byte %d", i)
			}
			toks = append(toks, cuToken{tString, src[i : j+1]})
			i = j + 1
		case c == '_' || unicode.IsLetter(rune(c)):
			j := i
			for j < len(src) && (src[j] == '_' || unicode.IsLetter(rune(src[j])) || unicode.IsDigit(rune(src[j]))) {
				j++
			}
			toks = append(toks, cuToken{tIdent, src[i:j]})
			i = j
		case unicode.IsDigit(rune(c)):
			j := i
			for j < len(src) && (unicode.IsDigit(rune(src[j])) || unicode.IsLetter(rune(src[j])) || src[j] == '.') {
				j++
			}
			toks = append(toks, cuToken{tNumber, src[i:j]})
			i = j
		default:
			toks = append(toks, cuToken{tPunct, string(c)})
			i++
		}
	}
	return toks, nil
}

// parseKernels finds every `extern "C" __global__ void [__launch_bounds__(X)] [MEMRA_*_CLUSTER] name(params)`.
func parseKernels(file, src string) ([]cuKernel, error) {
	toks, err := cuTokens(src)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var out []cuKernel
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].text != "extern" || toks[i+1].text != `"C"` {
			continue
		}
		j := i + 2
		expect := func(s string) error {
			if j >= len(toks) || toks[j].text != s {
				got := "end of file"
				if j < len(toks) {
					got = toks[j].text
				}
				return fmt.Errorf("%s: extern \"C\" kernel: want %q, got %q", file, s, got)
			}
			j++
			return nil
		}
		if err := expect("__global__"); err != nil {
			return nil, err
		}
		if err := expect("void"); err != nil {
			return nil, err
		}
		k := cuKernel{File: file}
		if j < len(toks) && toks[j].text == "__launch_bounds__" {
			j++
			if err := expect("("); err != nil {
				return nil, err
			}
			var parts []string
			for j < len(toks) && toks[j].text != ")" {
				parts = append(parts, toks[j].text)
				j++
			}
			if err := expect(")"); err != nil {
				return nil, err
			}
			k.LaunchBounds = strings.Join(parts, "")
		}
		// A cluster shape's macro (MEMRA_GDN_CLUSTER: __cluster_dims__ on
		// sm_90, nothing before it) may follow, not followed by "(".
		if j+1 < len(toks) && toks[j].kind == tIdent && strings.HasPrefix(toks[j].text, "MEMRA_") &&
			strings.HasSuffix(toks[j].text, "_CLUSTER") && toks[j+1].text != "(" {
			j++
		}
		if j >= len(toks) || toks[j].kind != tIdent {
			return nil, fmt.Errorf("%s: extern \"C\" kernel without a name", file)
		}
		k.Name = toks[j].text
		j++
		if err := expect("("); err != nil {
			return nil, err
		}
		var cur []cuToken
		flush := func() error {
			if len(cur) == 0 {
				return nil
			}
			p, err := parseParam(cur)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", file, k.Name, err)
			}
			k.Params = append(k.Params, p)
			cur = nil
			return nil
		}
		for ; j < len(toks) && toks[j].text != ")"; j++ {
			if toks[j].text == "," {
				if err := flush(); err != nil {
					return nil, err
				}
				continue
			}
			cur = append(cur, toks[j])
		}
		if err := flush(); err != nil {
			return nil, err
		}
		if err := expect(")"); err != nil {
			return nil, err
		}
		out = append(out, k)
		i = j - 1
	}
	return out, nil
}

// parseParam maps one C parameter declaration to a Param.
func parseParam(toks []cuToken) (Param, error) {
	last := toks[len(toks)-1]
	if last.kind != tIdent || len(toks) < 2 {
		return Param{}, fmt.Errorf("parameter %q has no name", joinTokens(toks))
	}
	var typ []string
	ptr := false
	for _, t := range toks[:len(toks)-1] {
		switch t.text {
		case "const", "__restrict__", "volatile":
		case "*":
			ptr = true
		default:
			typ = append(typ, t.text)
		}
	}
	p := Param{Name: last.text}
	ts := strings.Join(typ, " ")
	switch {
	case ptr:
		p.Kind = Ptr
	case ts == "int":
		p.Kind = I32
	case ts == "unsigned int" || ts == "unsigned":
		p.Kind = U32
	case ts == "float":
		p.Kind = F32
	default:
		return Param{}, fmt.Errorf("parameter %q: type %q is not one of pointer, int, unsigned int, float", last.text, ts)
	}
	return p, nil
}

func joinTokens(toks []cuToken) string {
	s := make([]string, len(toks))
	for i, t := range toks {
		s[i] = t.text
	}
	return strings.Join(s, " ")
}

// parseDefines returns the integer-valued #defines of a header.
func parseDefines(src string) map[string]int {
	out := map[string]int{}
	for _, l := range strings.Split(src, "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && f[0] == "#define" {
			if v, err := strconv.Atoi(f[2]); err == nil {
				out[f[1]] = v
			}
		}
	}
	return out
}

// parseIncludes returns the quoted #include targets of a file, in order.
func parseIncludes(src string) []string {
	var out []string
	for _, l := range strings.Split(src, "\n") {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "#include") {
			continue
		}
		rest := strings.TrimSpace(strings.TrimPrefix(l, "#include"))
		if len(rest) > 2 && rest[0] == '"' {
			if end := strings.IndexByte(rest[1:], '"'); end >= 0 {
				out = append(out, rest[1:1+end])
			}
		}
	}
	return out
}

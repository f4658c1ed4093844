package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/memra-ai/memra/engine/tokenizer"
	"github.com/memra-ai/memra/gguf"
)

// Token types (llama.cpp's TokenType).
const (
	TokenNormal      int32 = 1
	TokenControl     int32 = 3
	TokenUserDefined int32 = 4
	TokenUnused      int32 = 5
)

// maxTokenizerBytes bounds tokenizer.json; Qwen's is about 11 MB.
const maxTokenizerBytes = 256 << 20

// Vocab is the tokenizer metadata of a model, in llama.cpp's gpt2 layout.
type Vocab struct {
	Tokens []string // padded to the model's vocab size with "[PAD<i>]"
	Types  []int32
	Merges []string // "a b"
	// Special token ids and add_* flags in the order llama.cpp writes them.
	Special []gguf.KV
	// ChatTemplate is tokenizer.chat_template ("" = none).
	ChatTemplate string
}

// specialTypes is llama.cpp's SpecialVocab order and its key names.
var specialTypes = []struct{ typ, key string }{
	{"bos", "tokenizer.ggml.bos_token_id"},
	{"eos", "tokenizer.ggml.eos_token_id"},
	{"unk", "tokenizer.ggml.unknown_token_id"},
	{"sep", "tokenizer.ggml.seperator_token_id"},
	{"pad", "tokenizer.ggml.padding_token_id"},
	{"cls", "tokenizer.ggml.cls_token_id"},
	{"mask", "tokenizer.ggml.mask_token_id"},
}

// addFlagTypes are the add_<typ>_token flags llama.cpp's writer has keys for.
var addFlagTypes = map[string]bool{"bos": true, "eos": true, "sep": true}

// ReadVocab reads tokenizer.json, tokenizer_config.json (and a chat
// template file) and config.json from dir, as llama.cpp's gpt2 vocab path
// does, padding the token list to nVocab.
func ReadVocab(dir string, nVocab int) (*Vocab, error) {
	tjPath := filepath.Join(dir, "tokenizer.json")
	tok, err := readTokenizerJSON(tjPath)
	if err != nil {
		return nil, err
	}
	v := &Vocab{}
	if v.Tokens, v.Types, err = tok.tokenTable(nVocab); err != nil {
		return nil, fmt.Errorf("%s: %w", tjPath, err)
	}
	if v.Merges, err = tok.mergeList(); err != nil {
		return nil, fmt.Errorf("%s: %w", tjPath, err)
	}
	// Special tokens: tokenizer_config.json first, then config.json ids.
	ids := &specialIDs{nVocab: nVocab, ids: map[string]uint32{}}
	tmpl, flags, err := readTokenizerConfig(dir, tok.AddedTokens, ids)
	if err != nil {
		return nil, err
	}
	v.ChatTemplate = tmpl
	if err := readConfigIDs(dir, ids); err != nil {
		return nil, err
	}
	v.Special = append(ids.kvs(), flags...)
	return v, nil
}

// hfTokenizer is what ReadVocab reads of tokenizer.json.
type hfTokenizer struct {
	Model struct {
		Type   string            `json:"type"`
		Vocab  map[string]int    `json:"vocab"`
		Merges []json.RawMessage `json:"merges"`
	} `json:"model"`
	AddedTokens   []hfAddedToken  `json:"added_tokens"`
	PostProcessor json.RawMessage `json:"post_processor"`
}

type hfAddedToken struct {
	ID      int    `json:"id"`
	Content string `json:"content"`
	Special bool   `json:"special"`
}

// readTokenizerJSON reads the tokenizer.json at path, refusing a model
// other than BPE and the post-processors checkPostProcessor refuses.
func readTokenizerJSON(path string) (*hfTokenizer, error) {
	tj, err := readJSONFile(path)
	if err != nil {
		return nil, err
	}
	var tok hfTokenizer
	if err := decodeJSON(tj, &tok); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if tok.Model.Type != "BPE" {
		return nil, fmt.Errorf("%s: tokenizer model %q is not BPE", path, tok.Model.Type)
	}
	if err := checkPostProcessor(tok.PostProcessor); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &tok, nil
}

// tokenTable is the nVocab tokens by id and their types: model.vocab's and
// the added tokens (which take an id model.vocab also gives), the ids
// neither names padded as "[PAD<i>]".
func (t *hfTokenizer) tokenTable(nVocab int) ([]string, []int32, error) {
	// The faults found are the smallest id's, so that the error is the same
	// from run to run (maps iterate in random order); of one id's strings,
	// the two smallest (as strings: %q's quoting can order them otherwise).
	reverse := make(map[int]string, len(t.Model.Vocab)+len(t.AddedTokens))
	type dupe struct {
		id   int
		a, b string
	}
	var dup *dupe
	for s, id := range t.Model.Vocab {
		if prev, ok := reverse[id]; ok {
			// One id, two strings: whichever were kept, merges of the other
			// would name a token the vocabulary lacks.
			d := dupe{id, min(prev, s), max(prev, s)}
			if dup == nil || d.id < dup.id || d.id == dup.id && (d.a < dup.a || d.a == dup.a && d.b < dup.b) {
				dup = &d
			}
			reverse[id] = d.a
			continue
		}
		reverse[id] = s
	}
	if dup != nil {
		return nil, nil, fmt.Errorf("model.vocab gives id %d to both %q and %q", dup.id, dup.a, dup.b)
	}
	added := map[string]bool{} // content -> special
	for _, a := range t.AddedTokens {
		reverse[a.ID] = a.Content
		added[a.Content] = added[a.Content] || a.Special
	}
	bad, outside := 0, false
	for id := range reverse {
		if (id < 0 || id >= nVocab) && (!outside || id < bad) {
			bad, outside = id, true
		}
	}
	if outside {
		return nil, nil, fmt.Errorf("token id %d is outside the model's vocab_size %d", bad, nVocab)
	}
	tokens, types := make([]string, nVocab), make([]int32, nVocab)
	for i := range nVocab {
		s, ok := reverse[i]
		switch {
		case !ok:
			tokens[i] = fmt.Sprintf("[PAD%d]", i)
			types[i] = TokenUnused
		case hasAdded(added, s):
			if added[s] || looksSpecial(s) {
				types[i] = TokenControl
			} else {
				s = strings.ReplaceAll(s, "\u2581", " ")
				types[i] = TokenUserDefined
			}
			tokens[i] = s
		default:
			tokens[i] = s
			types[i] = TokenNormal
		}
	}
	return tokens, types, nil
}

// mergeList is model.merges as "a b", from either of its forms: "a b", or
// [a, b], whose parts may hold spaces.
func (t *hfTokenizer) mergeList() ([]string, error) {
	var merges []string
	for i, m := range t.Model.Merges {
		var s string
		if json.Unmarshal(m, &s) == nil {
			merges = append(merges, s)
			continue
		}
		var pair []string
		if err := decodeJSON(m, &pair); err != nil || len(pair) != 2 {
			return nil, fmt.Errorf("merges[%d] is neither \"a b\" nor [a, b]", i)
		}
		// Spaces inside a pair are encoded as U+0120, as llama.cpp does.
		enc := func(x string) string { return strings.ReplaceAll(x, " ", "\u0120") }
		merges = append(merges, enc(pair[0])+" "+enc(pair[1]))
	}
	return merges, nil
}

// specialIDs gathers the special token ids of a vocabulary of nVocab
// tokens, by type ("bos", ...), in the order they are set.
type specialIDs struct {
	nVocab int
	ids    map[string]uint32
	order  []string
}

// set gives typ the id, unless it has one: the id set first wins, and this
// one is not written.
func (s *specialIDs) set(typ string, id int64) error {
	if _, done := s.ids[typ]; done {
		return nil
	}
	if id < 0 || id >= int64(s.nVocab) {
		return fmt.Errorf("%s token id %d is outside the vocabulary of %d", typ, id, s.nVocab)
	}
	s.ids[typ] = uint32(id)
	s.order = append(s.order, typ)
	return nil
}

// kvs is the ids' metadata, in the order they were set.
func (s *specialIDs) kvs() []gguf.KV {
	var kvs []gguf.KV
	for _, typ := range s.order {
		for _, st := range specialTypes {
			if st.typ == typ {
				kvs = append(kvs, gguf.KV{Key: st.key, Value: gguf.Uint32Value(s.ids[typ])})
			}
		}
	}
	return kvs
}

// readTokenizerConfig reads dir's tokenizer_config.json, when there is
// one: the chat template (or its file's), the add_<typ>_token flags
// llama.cpp writes, and into ids the special tokens it names among added.
func readTokenizerConfig(dir string, added []hfAddedToken, ids *specialIDs) (tmpl string, flags []gguf.KV, err error) {
	tcPath := filepath.Join(dir, "tokenizer_config.json")
	tc, err := readJSONFile(tcPath)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", nil, nil
	case err != nil:
		return "", nil, err
	}
	var cfg map[string]json.RawMessage
	if err := decodeJSON(tc, &cfg); err != nil {
		return "", nil, fmt.Errorf("%s: %w", tcPath, err)
	}
	if tmpl, err = chatTemplate(dir, cfg); err != nil {
		return "", nil, err
	}
	for _, st := range specialTypes {
		if raw, ok := cfg["add_"+st.typ+"_token"]; ok {
			var b bool
			if json.Unmarshal(raw, &b) == nil && addFlagTypes[st.typ] {
				flags = append(flags, gguf.KV{Key: "tokenizer.ggml.add_" + st.typ + "_token", Value: gguf.BoolValue(b)})
			}
		}
		content, ok := tokenContent(cfg[st.typ+"_token"])
		if !ok {
			continue
		}
		for _, a := range added {
			if a.Content == content {
				if err := ids.set(st.typ, int64(a.ID)); err != nil {
					return "", nil, fmt.Errorf("%s: %w", tcPath, err)
				}
				break
			}
		}
	}
	return tmpl, flags, nil
}

// readConfigIDs sets into ids the special token ids of dir's config.json,
// or of its text_config where the top level has none; a config.json that
// does not read is passed over.
func readConfigIDs(dir string, ids *specialIDs) error {
	cfgPath := filepath.Join(dir, "config.json")
	cb, err := readJSONFile(cfgPath)
	if err != nil {
		return nil
	}
	var c map[string]json.RawMessage
	if err := decodeJSON(cb, &c); err != nil {
		return fmt.Errorf("%s: %w", cfgPath, err)
	}
	var text map[string]json.RawMessage
	if raw, ok := c["text_config"]; ok {
		_ = json.Unmarshal(raw, &text)
	}
	for _, st := range specialTypes {
		raw, ok := c[st.typ+"_token_id"]
		if !ok || string(raw) == "null" {
			raw, ok = text[st.typ+"_token_id"]
		}
		var id int64
		if ok && json.Unmarshal(raw, &id) == nil {
			if err := ids.set(st.typ, id); err != nil {
				return fmt.Errorf("%s: %w", cfgPath, err)
			}
		}
	}
	return nil
}

// Check builds the tokenizer that readers of the written file build, from
// its metadata alone (an in-memory GGUF without tensors), and returns why it
// does not load (a merge naming a token the vocabulary lacks, one string
// under two ids, no token for a byte), so that Convert can say so before
// the conversion rather than the first run of its output.
func (v *Vocab) Check(pre string) error {
	return checkTokenizer(v.KVs(pre))
}

// warnTokenizer tells warn, if set, where the tokenizer keys kvs() would
// not load from the written file, which then runs from token ids alone;
// src names where the keys came from. kvs is called only with a warn: the
// check is a whole tokenizer build.
func warnTokenizer(warn func(string), src string, kvs func() []gguf.KV) {
	if warn == nil {
		return
	}
	if err := checkTokenizer(kvs()); err != nil {
		warn(fmt.Sprintf("%s: its tokenizer does not load (%v), so the file runs from token ids alone (memra run --prompt-tokens)", src, err))
	}
}

// checkTokenizer builds the tokenizer of a GGUF holding kvs alone, as
// memra run would from the written file.
func checkTokenizer(kvs []gguf.KV) error {
	var buf bytes.Buffer
	w := gguf.NewWriter(&buf, 3)
	for _, kv := range kvs {
		w.SetKV(kv.Key, kv.Value)
	}
	if err := w.Write(); err != nil {
		return err
	}
	f, err := gguf.Parse(buf.Bytes())
	if err != nil {
		return err
	}
	_, err = tokenizer.FromGGUF(f)
	return err
}

func hasAdded(m map[string]bool, s string) bool { _, ok := m[s]; return ok }

// looksSpecial is llama.cpp's converter rule for added tokens that are not
// marked special but are control tokens by their spelling.
func looksSpecial(s string) bool {
	switch s {
	case "<pad>", "<mask>", "<2mass>", "[@BOS@]":
		return true
	}
	return (strings.HasPrefix(s, "<|") && strings.HasSuffix(s, "|>")) ||
		(strings.HasPrefix(s, "<\uff5c") && strings.HasSuffix(s, "\uff5c>")) ||
		(strings.HasPrefix(s, "<unused") && strings.HasSuffix(s, ">"))
}

// tokenContent reads a tokenizer_config "<typ>_token" entry: a string or an
// object with "content".
func tokenContent(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var o struct {
		Content *string `json:"content"`
	}
	if json.Unmarshal(raw, &o) == nil && o.Content != nil {
		return *o.Content, true
	}
	return "", false
}

// checkPostProcessor refuses post-processors whose BOS/EOS handling
// llama.cpp infers heuristically (Roberta, Template); Qwen uses ByteLevel.
func checkPostProcessor(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var pp struct {
		Type       string            `json:"type"`
		Processors []json.RawMessage `json:"processors"`
	}
	if err := decodeJSON(raw, &pp); err != nil {
		return fmt.Errorf("post_processor: %w", err)
	}
	if pp.Type == "RobertaProcessing" || pp.Type == "TemplateProcessing" {
		return fmt.Errorf("post_processor %s is not supported (only ByteLevel-style tokenizers)", pp.Type)
	}
	for _, p := range pp.Processors {
		if err := checkPostProcessor(p); err != nil {
			return err
		}
	}
	return nil
}

// chatTemplate returns tokenizer_config's chat_template, else the contents
// of chat_template.jinja, else chat_template.json's chat_template.
func chatTemplate(dir string, cfg map[string]json.RawMessage) (string, error) {
	if raw, ok := cfg["chat_template"]; ok && string(raw) != "null" {
		var s string
		if err := decodeJSON(raw, &s); err != nil {
			return "", fmt.Errorf("tokenizer_config.json: chat_template must be a string (named template lists are not supported)")
		}
		return s, nil
	}
	b, err := readJSONFile(filepath.Join(dir, "chat_template.jinja"))
	switch {
	case err == nil:
		return string(b), nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	b, err = readJSONFile(filepath.Join(dir, "chat_template.json"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil
	case err != nil:
		return "", err
	}
	var c struct {
		ChatTemplate string `json:"chat_template"`
	}
	if err := decodeJSON(b, &c); err != nil {
		return "", fmt.Errorf("chat_template.json: %w", err)
	}
	return c.ChatTemplate, nil
}

// readJSONFile reads one of the checkpoint's small files (its JSON and
// chat template): a regular file of at most maxTokenizerBytes. A named
// pipe or a device is refused before it is opened, where reading it would
// wait for a writer or never end.
func readJSONFile(path string) ([]byte, error) {
	fi, err := statInput(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() > maxTokenizerBytes {
		return nil, fmt.Errorf("%s: %d bytes exceeds the %d-byte limit", path, fi.Size(), maxTokenizerBytes)
	}
	return os.ReadFile(path)
}

// statInput stats one of the checkpoint's files, an error naming it unless
// it is a regular file: opening a named pipe would wait for a writer, and a
// device would read without end.
func statInput(path string) (fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	switch m := fi.Mode(); {
	case m.IsRegular():
		return fi, nil
	case m.IsDir():
		return nil, fmt.Errorf("%s is a directory, where the checkpoint has a file", path)
	}
	return nil, fmt.Errorf("%s is %s: the converter reads a checkpoint's files, so save it to a file first", path, fileKind(fi.Mode()))
}

// fileKind names a mode that is neither a regular file's nor a
// directory's, for messages.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	}
	return "not a regular file"
}

// KVs returns the tokenizer metadata in llama.cpp's order.
func (v *Vocab) KVs(pre string) []gguf.KV {
	kvs := []gguf.KV{
		{Key: "tokenizer.ggml.model", Value: gguf.StringValue("gpt2")},
		{Key: "tokenizer.ggml.pre", Value: gguf.StringValue(pre)},
		{Key: "tokenizer.ggml.tokens", Value: gguf.StringsValue(v.Tokens)},
		{Key: "tokenizer.ggml.token_type", Value: gguf.Int32sValue(v.Types)},
		// Always written, empty or not: byte-level BPE readers (ours,
		// llama.cpp's) require the key, and a vocabulary without merges
		// (synth's byte-level one) is still a valid BPE vocabulary.
		{Key: "tokenizer.ggml.merges", Value: gguf.StringsValue(v.Merges)},
	}
	kvs = append(kvs, v.Special...)
	if v.ChatTemplate != "" {
		kvs = append(kvs, gguf.KV{Key: "tokenizer.chat_template", Value: gguf.StringValue(v.ChatTemplate)})
	}
	return kvs
}

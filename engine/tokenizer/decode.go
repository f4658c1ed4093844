package tokenizer

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Decode returns the bytes the ids stand for, concatenated: normal tokens
// as their bytes, control and user-defined tokens as their text, unused
// tokens as nothing (llama.cpp's detokenize with special tokens shown). The
// result is not checked for UTF-8: a sequence cut inside a character
// decodes to a partial one (use a Stream to print as you go).
func (t *Tokenizer) Decode(ids []int32) (string, error) {
	var b strings.Builder
	for i, id := range ids {
		if id < 0 || int(id) >= len(t.pieces) {
			return "", fmt.Errorf("tokenizer: decode: ids[%d] = %d is outside the vocabulary of %d", i, id, len(t.pieces))
		}
		b.WriteString(t.pieces[id])
	}
	return b.String(), nil
}

// Stream decodes tokens one at a time into text that is always whole UTF-8
// characters: bytes that begin a character whose remaining bytes have not
// arrived yet are held back until they do. Not safe for concurrent use.
type Stream struct {
	t       *Tokenizer
	pending []byte
	err     error
}

// NewStream starts a streaming decoder.
func (t *Tokenizer) NewStream() *Stream { return &Stream{t: t} }

// Next adds one token and returns the text that is now complete (possibly
// ""). Bytes that can never form a character (an invalid sequence) come
// out as U+FFFD, one per byte. An id outside the vocabulary yields "" and
// is reported by Err.
func (s *Stream) Next(id int32) string {
	if id < 0 || int(id) >= len(s.t.pieces) {
		if s.err == nil {
			s.err = fmt.Errorf("tokenizer: stream: id %d is outside the vocabulary of %d", id, len(s.t.pieces))
		}
		return ""
	}
	s.pending = append(s.pending, s.t.pieces[id]...)
	return s.take(false)
}

// Flush returns whatever is held back (as U+FFFD per byte: at the end of the
// stream an unfinished character is invalid) and resets the stream.
func (s *Stream) Flush() string { return s.take(true) }

// Err returns the first error Next met, if any.
func (s *Stream) Err() error { return s.err }

// take emits the complete prefix of pending; with final, everything.
func (s *Stream) take(final bool) string {
	p := s.pending
	if len(p) == 0 {
		return ""
	}
	var b strings.Builder
	i := 0
	for i < len(p) {
		if p[i] < utf8.RuneSelf {
			b.WriteByte(p[i])
			i++
			continue
		}
		r, w := utf8.DecodeRune(p[i:])
		if r != utf8.RuneError || w > 1 {
			b.Write(p[i : i+w])
			i += w
			continue
		}
		// Invalid here: either the character is unfinished (all the bytes
		// so far can start one) or it is broken for good.
		if !final && !utf8.FullRune(p[i:]) && validPrefix(p[i:]) {
			break
		}
		b.WriteString("\uFFFD")
		i++
	}
	s.pending = append(s.pending[:0], p[i:]...)
	return b.String()
}

// validPrefix reports whether p (shorter than its lead byte announces) can
// still become a well-formed UTF-8 sequence.
func validPrefix(p []byte) bool {
	// Complete it with the smallest continuation bytes and let DecodeRune
	// judge; the second byte's range rules (E0, ED, F0, F4) are the only
	// ones that matter, and they depend on bytes we have.
	var full [utf8.UTFMax]byte
	n := copy(full[:], p)
	need := 0
	switch c := p[0]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 2
	case c >= 0xE0 && c <= 0xEF:
		need = 3
	case c >= 0xF0 && c <= 0xF4:
		need = 4
	default:
		return false
	}
	if n >= need {
		return false
	}
	for k := n; k < need; k++ {
		full[k] = 0x80
	}
	if n == 1 {
		// The second byte decides E0 (needs A0..BF) and F0 (needs 90..BF):
		// any byte that works will come, so only ask whether one exists.
		switch p[0] {
		case 0xE0:
			full[1] = 0xA0
		case 0xF0:
			full[1] = 0x90
		}
	}
	r, w := utf8.DecodeRune(full[:need])
	return !(r == utf8.RuneError && w == 1)
}

package tokenizer

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ardanlabs/jinja"
)

// Message is one chat turn.
type Message struct {
	Role    string // "system", "user", "assistant" or "tool"
	Content string
	// ReasoningContent, when not empty, is an assistant turn's thinking,
	// passed to the template as reasoning_content (Qwen3 puts it in a
	// <think> block); when empty the key is left undefined, as Hugging Face
	// does for a message without it.
	ReasoningContent string
}

// chatRenderer renders a conversation to the prompt text.
type chatRenderer interface {
	render(msgs []Message, addGenerationPrompt, enableThinking bool, bos, eos string) (string, error)
}

// errEmptyChat: a conversation needs at least one message (templates index
// messages[0]).
var errEmptyChat = errors.New("tokenizer: chat: no messages")

// HasChatTemplate reports whether the vocabulary carries
// tokenizer.chat_template. Without one ApplyChatTemplate uses built-in ChatML.
func (t *Tokenizer) HasChatTemplate() bool { return t.chatTemplate != "" }

// ChatTemplate returns tokenizer.chat_template ("" when absent).
func (t *Tokenizer) ChatTemplate() string { return t.chatTemplate }

// ApplyChatTemplate renders msgs with the file's tokenizer.chat_template (a
// Jinja template, run with the variables Hugging Face passes: messages,
// add_generation_prompt, enable_thinking, bos_token, eos_token). With
// addGenerationPrompt the text ends with the assistant turn's header, ready
// for generation. enableThinking is passed as enable_thinking, as Hugging
// Face's apply_chat_template(enable_thinking=...) does: false pre-fills an
// empty <think></think> block in Qwen3's and Qwen3.5's templates, true
// leaves the model to think (there the same as not passing it; templates
// that think only when enable_thinking is true need it set).
//
// Only when the file has no chat template is the built-in ChatML format
// used (<|im_start|>role\ncontent<|im_end|>\n per turn); HasChatTemplate
// tells which.
//
// The template is code from the file, and the Jinja engine bounds neither
// its recursion, its loops nor its output: a hostile template can run until
// killed or overflow the goroutine's stack, which ends the process (Go
// cannot recover from that; a panic inside the engine comes back as an
// error). Render templates of files you do not trust in
// a child process with a time and size limit, as memra run --chat does
// (tools/memra/chat.go).
func (t *Tokenizer) ApplyChatTemplate(msgs []Message, addGenerationPrompt bool, enableThinking bool) (string, error) {
	if len(msgs) == 0 {
		return "", errEmptyChat
	}
	t.chatOnce.Do(func() {
		if t.chatTemplate == "" {
			t.chat = chatML{}
			return
		}
		tmpl, err := compileTemplate(t.chatTemplate)
		if err != nil {
			t.chatErr = fmt.Errorf("tokenizer: compile tokenizer.chat_template: %w", err)
			return
		}
		t.chat = jinjaChat{tmpl}
	})
	if t.chatErr != nil {
		return "", t.chatErr
	}
	return t.chat.render(msgs, addGenerationPrompt, enableThinking, t.TokenPiece(t.bos), t.TokenPiece(t.eos))
}

type jinjaChat struct{ tmpl *jinja.Template }

// enginePanic wraps what the template engine panicked with: it panics on
// some templates (selectattr with one argument indexes past its arguments),
// and a template is the file's data, so that must come back as an error.
func enginePanic(r any) error {
	return fmt.Errorf("the template engine failed (panic: %v)", r)
}

// compileTemplate is jinja.Compile with a panic turned into an error.
func compileTemplate(src string) (tmpl *jinja.Template, err error) {
	defer func() {
		if r := recover(); r != nil {
			tmpl, err = nil, enginePanic(r)
		}
	}()
	return jinja.Compile(src)
}

func (j jinjaChat) render(msgs []Message, gen, thinking bool, bos, eos string) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", fmt.Errorf("tokenizer: render tokenizer.chat_template: %w", enginePanic(r))
		}
	}()
	list := make([]any, len(msgs))
	for i, m := range msgs {
		d := map[string]any{"role": m.Role, "content": m.Content}
		if m.ReasoningContent != "" {
			d["reasoning_content"] = m.ReasoningContent
		}
		list[i] = d
	}
	vars := map[string]any{
		"messages":              list,
		"add_generation_prompt": gen,
		"enable_thinking":       thinking,
		"bos_token":             bos,
		"eos_token":             eos,
	}
	out, err := j.tmpl.Render(vars)
	if err != nil {
		return "", fmt.Errorf("tokenizer: render tokenizer.chat_template: %w", err)
	}
	return out, nil
}

// chatML is the fallback for files without a template: Qwen's ChatML turns,
// and Qwen3's empty think block when thinking is off.
type chatML struct{}

func (chatML) render(msgs []Message, gen, thinking bool, _, _ string) (string, error) {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
	}
	if gen {
		b.WriteString("<|im_start|>assistant\n")
		if !thinking {
			b.WriteString("<think>\n\n</think>\n\n")
		}
	}
	return b.String(), nil
}

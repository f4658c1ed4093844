package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"time"

	"github.com/memra-ai/memra/engine/tokenizer"
)

// A model file's chat template is a program (Jinja), and the template
// engine has no limits of its own: a hostile one (a macro calling itself, a
// loop of 10^8, a string of gigabytes) would end this process with a stack
// overflow or hold it until the machine runs out of memory. So memra run
// renders it in a child process of itself, the hidden command chatCmdName,
// whose stack and memory are capped, under a time limit and a cap on the
// prompt's size. The child keeps the time limit itself too (a second
// later than the parent), so that it ends where its parent died first.
const (
	chatCmdName   = "__render-chat"
	chatTimeout   = 10 * time.Second
	chatMaxBytes  = 16 << 20 // a prompt text; real templates add a few hundred bytes to the message
	chatMaxStack  = 64 << 20 // the child's goroutine stack (Go's default cap is 1 GB)
	chatMaxMemory = 1 << 30  // the child's memory, the runtime's total (rendering with the Qwen3 vocabulary: 72 MB resident)
	chatOwnGrace  = time.Second
	chatMemPoll   = 2 * time.Millisecond // at the ~1.6 GB/s a template filled memory (a review), ~3 MB past the cap
)

// renderChat returns the prompt text of one user message in the chat
// template of the GGUF at path (tokenizer.ApplyChatTemplate, with the
// generation prompt), rendered by the child process within limit.
func renderChat(path, user string, think bool, limit time.Duration) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("chat template: cannot start the renderer: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, chatCmdName, fmt.Sprint(think), path, (limit + chatOwnGrace).String())
	cmd.Stdin = strings.NewReader(user)
	out := &cappedBuffer{max: chatMaxBytes, cancel: cancel}
	errOut := &cappedBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = out, errOut
	err = cmd.Run()
	const hostile = "the template is broken or hostile"
	switch msg := errOut.buf.String(); {
	case out.over:
		return "", fmt.Errorf("%s: chat template: the prompt it renders passed %d MB; %s", path, chatMaxBytes>>20, hostile)
	case ctx.Err() != nil:
		return "", fmt.Errorf("%s: chat template: rendering took over %v; %s", path, limit, hostile)
	case strings.Contains(msg, "stack overflow"):
		return "", fmt.Errorf("%s: chat template: rendering recursed past %d MB of stack; %s", path, chatMaxStack>>20, hostile)
	case strings.Contains(msg, chatMemoryWord):
		return "", fmt.Errorf("%s: chat template: rendering took over %d MB of memory; %s", path, chatMaxMemory>>20, hostile)
	case err != nil && strings.TrimSpace(msg) == "":
		return "", fmt.Errorf("%s: chat template: the renderer failed without a word (%v)", path, err)
	case err != nil:
		return "", fmt.Errorf("%s: chat template: %s", path, strings.TrimSpace(firstLine(msg)))
	}
	return out.buf.String(), nil
}

// chatMemoryWord opens the child's line when its memory passed the cap.
const chatMemoryWord = "renderer memory"

// runRenderChat is the child's side: args are "true"|"false" (think), the
// GGUF path and its own time limit (a time.Duration), the user message
// comes on stdin, the text goes to stdout. A failure is one line on stderr
// and exit status 1; a stack past chatMaxStack ends the process, which the
// parent reports, and so do its memory past chatMaxMemory and its own time
// limit (it exits: nothing of it outlives a parent that died).
func runRenderChat(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	debug.SetMaxStack(chatMaxStack)
	fail := func(err error) int {
		fmt.Fprintln(stderr, strings.ReplaceAll(err.Error(), "\n", " "))
		return 1
	}
	if len(args) != 3 {
		return fail(errors.New("usage: memra " + chatCmdName + " THINK FILE.gguf LIMIT < message"))
	}
	limit, err := time.ParseDuration(args[2])
	if err != nil || limit <= 0 {
		return fail(fmt.Errorf("limit %q: want a positive duration", args[2]))
	}
	time.AfterFunc(limit, func() {
		fmt.Fprintf(stderr, "rendering took over its own limit of %v\n", limit)
		os.Exit(1)
	})
	go capMemory(chatMaxMemory, chatMemPoll, func(total uint64) {
		fmt.Fprintf(stderr, "%s passed %d MB (%d MB)\n", chatMemoryWord, chatMaxMemory>>20, total>>20)
		os.Exit(1)
	})
	user, err := io.ReadAll(stdin)
	if err != nil {
		return fail(err)
	}
	tok, err := loadTokenizer(args[1])
	if err != nil {
		return fail(err)
	}
	text, err := tok.ApplyChatTemplate([]tokenizer.Message{{Role: "user", Content: string(user)}}, true, args[0] == "true")
	if err != nil {
		return fail(err)
	}
	if _, err := io.WriteString(stdout, text); err != nil {
		return fail(err)
	}
	return 0
}

// capMemory calls over with the runtime's total memory once it passes max,
// looking every poll: a single allocation counts there as soon as it is
// made, before the pages it asks for are touched.
func capMemory(max uint64, poll time.Duration, over func(total uint64)) {
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	for range time.Tick(poll) {
		metrics.Read(sample)
		if total := sample[0].Value.Uint64(); total > max {
			over(total)
			return
		}
	}
}

// cappedBuffer keeps up to max bytes; a write past them keeps what fits,
// fails and cancels the child, so a template cannot fill this process's
// memory. What fits is kept because a pipe's reads come in chunks of any
// size: the child's fatal error and its trace can arrive in one read past
// max, whose first line says why the child died.
type cappedBuffer struct {
	buf    bytes.Buffer
	max    int
	over   bool
	cancel func()
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:max(room, 0)])
		c.over = true
		if c.cancel != nil {
			c.cancel()
		}
		return max(room, 0), errors.New("output cap reached")
	}
	return c.buf.Write(p)
}

// firstLine is s up to its first newline: a Go runtime's fatal error is
// one line and a long trace.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

package sample

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Decoder is the backend contract (docs/design.md, "Backends"): the CPU and
// GPU backends both implement it. What a step returns belongs to the
// decoder and is valid until its next step or Close.
type Decoder interface {
	DecodeStep(token int32) ([]float32, error) // appends one token, returns logits [n_vocab]
	Reset()
	Len() int      // tokens in the cache
	Capacity() int // most tokens the cache holds
}

// TopDecoder is a Decoder that can also return, in place of a step's
// logits, only its k most likely tokens and their logits, sorted as TopK
// sorts them (logit descending, NaN last, ties by lower id): all that top-k
// sampling without a repetition penalty reads
// (Options.TopOnly), in a few hundred bytes where the logits of a 248k
// vocabulary are 1 MB. The GPU session selects them on the device.
type TopDecoder interface {
	Decoder
	// DecodeTop appends one token and returns the top k (1 ≤ k ≤ MaxTop()).
	DecodeTop(token int32, k int) (ids []int32, logits []float32, err error)
	MaxTop() int
}

// Feeder is a Decoder that can also append tokens without computing their
// logits: the prompt's tokens before its last, whose logits nobody reads
// (the logits matvec is a tenth of a GPU step and more of a CPU one). On an
// error, how many of the tokens were appended is the backend's to say (Len
// tells): the GPU session checks them all first and appends none, the CPU
// backend keeps those before the one that failed.
type Feeder interface {
	Decoder
	Feed(tokens []int32) error
}

// ContextFeeder is a Feeder that stops feeding once ctx is done, returning
// ctx's error, with the tokens before the one in hand appended (Len
// tells): GenerateContext gives it the prompt, where a plain Feeder's Feed
// runs to its end whatever the context. The CPU backend, whose tokens take
// a tenth of a second or more each, is one.
type ContextFeeder interface {
	Feeder
	FeedContext(ctx context.Context, tokens []int32) error
}

// Stats times a Generate call.
type Stats struct {
	PromptTokens int
	GenTokens    int
	PromptTime   time.Duration // feeding the prompt (ends with the first logits)
	GenTime      time.Duration // every DecodeStep after the prompt
}

// PromptTokPerSec and GenTokPerSec are throughputs (0 when nothing was timed).
func (s Stats) PromptTokPerSec() float64 { return rate(s.PromptTokens, s.PromptTime) }

// GenTokPerSec counts the decode steps after the prompt (GenTokens − 1 of
// them: the first generated token comes from the prompt's last logits).
func (s Stats) GenTokPerSec() float64 { return rate(max(s.GenTokens-1, 0), s.GenTime) }

func rate(n int, d time.Duration) float64 {
	if n == 0 || d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// maxPrealloc bounds the generated tokens Generate allocates its history
// for before it has them; past it the history grows as tokens come.
const maxPrealloc = 1 << 16

// ErrStop may be returned by an emit callback to end generation early
// without an error.
var ErrStop = errors.New("stop generation")

// Generate continues the decoder's sequence with prompt, then produces up to
// n tokens. The first generated token is chosen from the logits after the
// last prompt token; each later one from the logits after feeding the
// previous. emit (may be nil) sees each token as soon as it is chosen;
// generation ends after n tokens, a stop token (included), or emit returning
// ErrStop. The decoder is not reset: call Reset first for a fresh sequence;
// the repetition penalty's window then holds this call's prompt and
// generated tokens, not those cached before it.
// A TopDecoder whose MaxTop admits the options (Options.TopOnly) returns
// only the top k after the last prompt token and each generated one; the
// tokens are those the logits would give. A Feeder takes the prompt's
// tokens before its last without their logits.
func Generate(d Decoder, prompt []int32, n int, opts Options, emit func(tok int32) error) ([]int32, Stats, error) {
	return GenerateContext(context.Background(), d, prompt, n, opts, emit)
}

// GenerateContext is Generate that also stops while the prompt is fed, once
// ctx is done: between its tokens, or inside a ContextFeeder's Feed. The
// error then wraps ctx's, and Stats.PromptTokens counts the prompt's tokens
// the decoder holds. After the prompt, stopping is emit's to ask (ErrStop,
// or an error of its own): a step is never cut short.
func GenerateContext(ctx context.Context, d Decoder, prompt []int32, n int, opts Options, emit func(tok int32) error) ([]int32, Stats, error) {
	var st Stats
	if len(prompt) == 0 {
		return nil, st, fmt.Errorf("generate: empty prompt")
	}
	if n <= 0 {
		return nil, st, nil
	}
	// The last generated token is never fed back, so the sequence needs
	// room for the prompt and n−1 generated tokens. Compared as a
	// difference: the sum wraps for n near math.MaxInt ("until a stop
	// token").
	if room := d.Capacity() - d.Len() - len(prompt); n-1 > room {
		return nil, st, fmt.Errorf("generate: context full: %d cached + %d prompt + %d generated − 1 tokens exceed the capacity %d",
			d.Len(), len(prompt), n, d.Capacity())
	}
	s, err := NewSampler(opts)
	if err != nil {
		return nil, st, fmt.Errorf("generate: %w", err)
	}
	// Room for n tokens up front, but no more than maxPrealloc: a decoder
	// without a context limit (Capacity math.MaxInt) admits any n, where
	// len(prompt)+n wraps (a makeslice panic) or asks for terabytes.
	history := append(make([]int32, 0, len(prompt)+min(n, maxPrealloc)), prompt...)
	td, top := d.(TopDecoder)
	top = top && opts.TopOnly(td.MaxTop())
	// step feeds tok; the next token is picked from what it returns.
	var next func() (int32, error)
	step := func(tok int32) error {
		if top {
			ids, l, err := td.DecodeTop(tok, opts.TopK)
			next = func() (int32, error) { return s.SampleTop(ids, l) }
			return err
		}
		logits, err := d.DecodeStep(tok)
		next = func() (int32, error) { return s.Sample(logits, history) }
		return err
	}
	start := time.Now()
	last := len(prompt) - 1
	len0 := d.Len()
	// stopped is the prompt cut short by ctx: the tokens the decoder holds.
	stopped := func(err error) ([]int32, Stats, error) {
		st.PromptTokens, st.PromptTime = d.Len()-len0, time.Since(start)
		return nil, st, fmt.Errorf("generate: prompt stopped after %d of %d tokens: %w", st.PromptTokens, len(prompt), err)
	}
	if err := ctx.Err(); err != nil {
		return stopped(err)
	}
	if f, ok := d.(ContextFeeder); ok && last > 0 {
		if err := f.FeedContext(ctx, prompt[:last]); err != nil {
			if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
				return stopped(err)
			}
			return nil, st, fmt.Errorf("generate: prompt: %w", err)
		}
	} else if f, ok := d.(Feeder); ok && last > 0 {
		if err := f.Feed(prompt[:last]); err != nil {
			return nil, st, fmt.Errorf("generate: prompt: %w", err)
		}
	} else {
		for i, tok := range prompt[:last] {
			if err := ctx.Err(); err != nil {
				return stopped(err)
			}
			if _, err := d.DecodeStep(tok); err != nil {
				return nil, st, fmt.Errorf("generate: prompt token %d: %w", i, err)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return stopped(err)
	}
	if err := step(prompt[last]); err != nil {
		return nil, st, fmt.Errorf("generate: prompt token %d: %w", last, err)
	}
	st.PromptTokens = len(prompt)
	st.PromptTime = time.Since(start)
	start = time.Now()
	var out []int32
	for {
		tok, err := next()
		if err != nil {
			st.GenTime = time.Since(start)
			return out, st, fmt.Errorf("generate: token %d: %w", len(out), err)
		}
		out = append(out, tok)
		history = append(history, tok)
		st.GenTokens = len(out)
		if emit != nil {
			if err := emit(tok); err != nil {
				st.GenTime = time.Since(start)
				if errors.Is(err, ErrStop) {
					return out, st, nil
				}
				return out, st, err
			}
		}
		if len(out) == n || opts.IsStop(tok) {
			break
		}
		if err := step(tok); err != nil {
			st.GenTime = time.Since(start)
			return out, st, fmt.Errorf("generate: step %d: %w", len(out), err)
		}
	}
	st.GenTime = time.Since(start)
	return out, st, nil
}

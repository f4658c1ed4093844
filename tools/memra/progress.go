package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progressBar draws "label [=====>    ]  45%  1.2/2.6 GB" on stderr, at
// most a few times a second, when enabled.
type progressBar struct {
	w     io.Writer
	on    bool
	label string
	last  time.Time
	done  int64
	total int64
}

// newProgressBar enables the bar when forced or when w is a terminal.
func newProgressBar(w io.Writer, force bool, label string) *progressBar {
	on := force
	if f, ok := w.(*os.File); ok && !on {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			on = true
		}
	}
	return &progressBar{w: w, on: on, label: label}
}

func (p *progressBar) update(done, total int64) {
	p.done, p.total = done, total
	if !p.on || time.Since(p.last) < 200*time.Millisecond {
		return
	}
	p.last = time.Now()
	p.draw()
}

func (p *progressBar) draw() {
	const width = 30
	frac := 0.0
	if p.total > 0 {
		frac = float64(p.done) / float64(p.total)
	}
	n := int(frac * width)
	bar := make([]byte, width)
	for i := range bar {
		switch {
		case i < n:
			bar[i] = '='
		case i == n:
			bar[i] = '>'
		default:
			bar[i] = ' '
		}
	}
	fmt.Fprintf(p.w, "\r%s [%s] %3.0f%%  %.2f/%.2f GB", p.label, bar, 100*frac, float64(p.done)/1e9, float64(p.total)/1e9)
}

func (p *progressBar) finish(ok bool) {
	if !p.on {
		return
	}
	if ok {
		p.draw()
	}
	fmt.Fprintln(p.w)
}

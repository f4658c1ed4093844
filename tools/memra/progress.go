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
	fmt.Fprintf(p.w, "\r%s [%s] %3.0f%%  %s", p.label, bar, 100*frac, byteCounts(p.done, p.total))
}

// byteCounts is "done/total UNIT" in the largest decimal unit total reaches,
// so a tiny model's bar does not read 0.00/0.00 GB; the unit follows the
// total, which stays fixed, so the line keeps its width as done grows.
func byteCounts(done, total int64) string {
	for _, u := range []struct {
		size float64
		name string
	}{{1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}} {
		if float64(total) >= u.size {
			return fmt.Sprintf("%.2f/%.2f %s", float64(done)/u.size, float64(total)/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d/%d B", done, total)
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

package main

import (
	"fmt"
	"io"
	"os"
	"time"
)

// progressBar draws "label [=====>    ]  45%  1.2/2.6 GB  310 MB/s, 5s
// left" on stderr, at most a few times a second, when enabled; the rate
// and time left once a second has passed, and at the end the time taken.
type progressBar struct {
	w     io.Writer
	on    bool
	label string
	now   func() time.Time // time.Now; a test's clock
	start time.Time        // the first update
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
	return &progressBar{w: w, on: on, label: label, now: time.Now}
}

func (p *progressBar) update(done, total int64) {
	p.done, p.total = done, total
	now := p.now()
	if p.start.IsZero() {
		p.start = now
	}
	if !p.on || now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	p.draw(false)
}

// pace is the bar's tail: the rate and the time left while the work goes
// on, the time taken and the rate at its end; empty in the first second,
// too soon for a rate that means anything. Padded, so that a shorter tail
// overwrites a longer one's characters.
func pace(done, total int64, elapsed time.Duration, end bool) string {
	if elapsed < time.Second {
		return ""
	}
	rate := float64(done) / elapsed.Seconds()
	r := fmt.Sprintf("%.0f MB/s", rate/1e6)
	if rate >= 1e9 {
		r = fmt.Sprintf("%.2f GB/s", rate/1e9)
	}
	if end {
		return fmt.Sprintf("  %-22s", elapsed.Round(100*time.Millisecond).String()+", "+r)
	}
	left := "?"
	if rate > 0 && total >= done {
		left = time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("  %-22s", r+", "+left+" left")
}

func (p *progressBar) draw(end bool) {
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
	elapsed := time.Duration(0)
	if !p.start.IsZero() {
		elapsed = p.now().Sub(p.start)
	}
	fmt.Fprintf(p.w, "\r%s [%s] %3.0f%%  %s%s", p.label, bar, 100*frac, byteCounts(p.done, p.total), pace(p.done, p.total, elapsed, end))
}

// byteCounts is "done/total UNIT" in the largest decimal unit total reaches,
// so a tiny model's bar does not read 0.00/0.00 GB; the unit follows the
// total, which stays fixed, so the line keeps its width as done grows.
func byteCounts(done, total int64) string {
	size, unit := decimalUnit(total)
	if size == 1 {
		return fmt.Sprintf("%d/%d B", done, total)
	}
	return fmt.Sprintf("%.2f/%.2f %s", float64(done)/size, float64(total)/size, unit)
}

// decimalUnit is the largest decimal unit n reaches and its size: GB, MB,
// kB, or B (1) below a kilobyte.
func decimalUnit(n int64) (size float64, unit string) {
	for _, u := range []struct {
		size float64
		name string
	}{{1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}} {
		if float64(n) >= u.size {
			return u.size, u.name
		}
	}
	return 1, "B"
}

func (p *progressBar) finish(ok bool) {
	if !p.on {
		return
	}
	if ok {
		p.draw(true)
	}
	fmt.Fprintln(p.w)
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestProgressBar: the bar as a user sees it on stderr: nothing unless
// forced or on a terminal; the first update draws at once, one within
// 200 ms of the last draw does not; finish draws the end state and a
// newline, or only the newline after a failure.
func TestProgressBar(t *testing.T) {
	var off bytes.Buffer
	p := newProgressBar(&off, false, "x")
	p.update(1, 2)
	p.finish(true)
	if off.Len() != 0 {
		t.Errorf("bar not forced, not a terminal: wrote %q", off.String())
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if newProgressBar(f, false, "x").on || !newProgressBar(f, true, "x").on {
		t.Error("a regular file turns the bar on unless forced")
	}
	// A character device (a terminal; here the null device, opened for
	// reading so nothing is written) turns it on unforced.
	if runtime.GOOS != "windows" {
		dev, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		defer dev.Close()
		if !newProgressBar(dev, false, "x").on {
			t.Error("a character device does not turn the bar on")
		}
	}

	var b bytes.Buffer
	p = newProgressBar(&b, true, "convert")
	p.update(45e7, 1e9)
	want := "\rconvert [=============>                ]  45%  0.45/1.00 GB"
	if b.String() != want {
		t.Errorf("first update:\n%q, want\n%q", b.String(), want)
	}
	b.Reset()
	p.update(5e8, 1e9)
	if b.Len() != 0 {
		t.Errorf("update right after a draw wrote %q", b.String())
	}
	p.update(1e9, 1e9)
	p.finish(true)
	want = "\rconvert [==============================] 100%  1.00/1.00 GB\n"
	if b.String() != want {
		t.Errorf("finish:\n%q, want\n%q", b.String(), want)
	}

	b.Reset()
	p = newProgressBar(&b, true, "load")
	p.update(0, 0)
	p.finish(false)
	want = "\rload [>" + strings.Repeat(" ", 29) + "]   0%  0/0 B\n"
	if b.String() != want {
		t.Errorf("nothing to do, failed:\n%q, want\n%q", b.String(), want)
	}

	// A total of one byte, done: full.
	b.Reset()
	p = newProgressBar(&b, true, "x")
	p.update(1, 1)
	if want = "\rx [" + strings.Repeat("=", 30) + "] 100%  1/1 B"; b.String() != want {
		t.Errorf("1 of 1 byte:\n%q, want\n%q", b.String(), want)
	}
}

// TestByteCounts pins the unit each total takes: the largest decimal unit it
// reaches, for done too.
func TestByteCounts(t *testing.T) {
	for _, c := range []struct {
		done, total int64
		want        string
	}{
		{0, 0, "0/0 B"},
		{512, 999, "512/999 B"},
		{0, 1000, "0.00/1.00 kB"},
		{1500, 999999, "1.50/1000.00 kB"},
		{12_345_678, 50_000_000, "12.35/50.00 MB"},
		{999_999, 1e9, "0.00/1.00 GB"},
		{17_920_000_000, 17_920_000_000, "17.92/17.92 GB"},
	} {
		if got := byteCounts(c.done, c.total); got != c.want {
			t.Errorf("byteCounts(%d, %d) = %q, want %q", c.done, c.total, got, c.want)
		}
	}
}

// TestProgressPace: past the first second the bar tells the rate and the
// time left, and at the end the time taken, on a clock the test moves.
func TestProgressPace(t *testing.T) {
	var b bytes.Buffer
	clock := time.Unix(1000, 0)
	p := newProgressBar(&b, true, "synth 9b")
	p.now = func() time.Time { return clock }
	p.update(0, 9e9)
	clock = clock.Add(500 * time.Millisecond)
	b.Reset()
	p.update(1e9, 9e9)
	if strings.Contains(b.String(), "/s") {
		t.Errorf("half a second in: %q; want no rate yet", b.String())
	}
	clock = clock.Add(1500 * time.Millisecond) // 2 s: 3 GB done, 1.5 GB/s, 6 GB to go
	b.Reset()
	p.update(3e9, 9e9)
	if want := "  3.00/9.00 GB  1.50 GB/s, 4s left" + strings.Repeat(" ", 22-len("1.50 GB/s, 4s left")); !strings.HasSuffix(b.String(), want) {
		t.Errorf("2 s in:\n%q, want it to end\n%q", b.String(), want)
	}
	clock = clock.Add(4 * time.Second)
	p.update(9e9, 9e9)
	b.Reset()
	p.finish(true)
	if want := "  9.00/9.00 GB  6s, 1.50 GB/s" + strings.Repeat(" ", 22-len("6s, 1.50 GB/s")) + "\n"; !strings.HasSuffix(b.String(), want) {
		t.Errorf("at the end:\n%q, want it to end\n%q", b.String(), want)
	}
	for _, c := range []struct {
		done, total int64
		elapsed     time.Duration
		want        string
	}{
		{0, 100, 2 * time.Second, "0 MB/s, ? left"},      // nothing done yet: no estimate
		{5e6, 1e7, 10 * time.Second, "0 MB/s, 10s left"}, // 0.5 MB/s prints as 0 MB/s; the estimate stands
		{1e8, 1e9, 1 * time.Second, "100 MB/s, 9s left"},
	} {
		if got := strings.TrimSpace(pace(c.done, c.total, c.elapsed, false)); got != c.want {
			t.Errorf("pace(%d, %d, %v) = %q, want %q", c.done, c.total, c.elapsed, got, c.want)
		}
	}
}

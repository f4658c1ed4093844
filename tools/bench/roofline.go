package main

import (
	"math"
	"slices"

	"github.com/memra-ai/memra/engine/model"
)

// traffic is the part of a model's shape that sets the bytes one decode
// step moves besides the weights.
type traffic struct {
	nAttn      int  // attention layers
	nKV        int  // KV heads
	headDim    int  // Dh of K and V
	fp8        bool // KV stored as e4m3 with one f32 scale per (head, token) vector
	nGDN       int  // Gated DeltaNet layers
	hv         int  // V heads of a GDN layer (state [H_v][128][128] f32)
	convChan   int  // conv channels C = 2K + V
	convKernel int  // conv taps (state keeps kernel-1 of them)
}

func trafficOf(c *model.Config, fp8 bool) traffic {
	nAttn := c.NumAttention()
	t := traffic{nAttn: nAttn, nKV: c.NHeadKV, headDim: c.HeadDimK, fp8: fp8, nGDN: c.NLayer - nAttn}
	if t.nGDN > 0 {
		t.hv, t.convChan, t.convKernel = c.SSMNumVHeads, c.SSMConvChannels(), c.SSMConvKernel
	}
	return t
}

// kvBytes is what attention reads from the KV cache for one token over tKV
// keys: per attention layer, per KV head, tKV rows of K and of V (Dh
// elements of 2 bytes, or 1 byte plus a 4-byte scale with FP8).
func (t traffic) kvBytes(tKV float64) float64 {
	row := float64(t.headDim * 2)
	if t.fp8 {
		row = float64(t.headDim + 4)
	}
	return float64(t.nAttn*t.nKV) * tKV * row * 2
}

// stateBytes is the recurrent state one token reads and writes: per GDN
// layer the [H_v][128][128] f32 state and the [C][kernel-1] f32 conv state,
// each read once and written once.
func (t traffic) stateBytes() float64 {
	per := float64(t.hv*128*128*4) + float64(t.convChan*(t.convKernel-1)*4)
	return 2 * float64(t.nGDN) * per
}

// meanTKV is the mean attention length over tokens steps decoded from a
// cache holding ctx tokens: the step at position p attends to p+1 keys, for
// p = ctx … ctx+tokens-1.
func meanTKV(ctx, tokens int) float64 { return float64(ctx) + float64(tokens+1)/2 }

// newRow is the measurement-free part of the row of model label with KV
// type kv at context ctx, tokens decoded per repeat: the bytes one token
// moves (weightBytes of weights a step reads, tr's KV at the mean attention
// length and recurrent state) and the roofline at copy bandwidth bwRW.
func newRow(label, kv string, ctx, tokens int, weightBytes float64, tr traffic, bwRW float64) Row {
	r := Row{Model: label, KV: kv, Context: ctx, Tokens: tokens, MeanTKV: meanTKV(ctx, tokens),
		WeightBytes: weightBytes, StateBytes: tr.stateBytes()}
	r.KVBytes = tr.kvBytes(r.MeanTKV)
	r.RooflineMs = rooflineMs(r.bytes(), bwRW)
	return r
}

// rooflineMs is the time to move bytes at the measured copy bandwidth
// bwRW (bytes read + written per second: so counted, the H200 copies at
// ~4.19 TB/s and streams read-only at 4.11) counted as if every byte were a read: ms = bytes / bwRW · 1e3.
// Without a bandwidth it is 0 (JSON has no NaN).
func rooflineMs(bytes, bwRW float64) float64 {
	if bwRW <= 0 {
		return 0
	}
	return bytes / bwRW * 1e3
}

// Stat summarises repeated measurements.
type Stat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	Q1     float64 `json:"q1"` // lower quartile (linear interpolation)
	Q3     float64 `json:"q3"` // upper quartile
}

// summarize returns the median, extremes and quartiles of xs (not changed).
func summarize(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return Stat{Median: quantile(s, 0.5), Min: s[0], Max: s[len(s)-1], Q1: quantile(s, 0.25), Q3: quantile(s, 0.75)}
}

// quantile of sorted s at q in [0,1], interpolating linearly between the
// two nearest ranks.
func quantile(s []float64, q float64) float64 {
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(s)-1)
	f := pos - float64(lo)
	return s[lo]*(1-f) + s[hi]*f
}

// spreadPct is (max-min)/median in percent: how far the repeats scatter.
func (s Stat) spreadPct() float64 {
	if s.Median == 0 {
		return 0
	}
	return (s.Max - s.Min) / s.Median * 100
}

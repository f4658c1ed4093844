// Package evtime times device work between CUDA events, for the experiment
// commands (engine/internal/mvexp, engine/internal/pchain): warm-up calls,
// then batches between two events, and the median batch.
package evtime

import (
	"slices"

	"github.com/memra-ai/memra/engine/cuda"
)

// PerCall returns the median over batches of the device seconds per call of
// fn: warm untimed calls fn(0..warm-1) first, then each batch calls fn(0..n-1)
// between two events.
func PerCall(e *cuda.Engine, warm, batches, n int, fn func(i int) error) (float64, error) {
	start, err := e.NewEvent()
	if err != nil {
		return 0, err
	}
	defer e.DestroyEvent(start)
	end, err := e.NewEvent()
	if err != nil {
		return 0, err
	}
	defer e.DestroyEvent(end)
	for i := range warm {
		if err := fn(i); err != nil {
			return 0, err
		}
	}
	var ts []float64
	for range batches {
		err := e.Do(func() error {
			if err := e.Record(start); err != nil {
				return err
			}
			for i := range n {
				if err := fn(i); err != nil {
					return err
				}
			}
			return e.Record(end)
		})
		if err != nil {
			return 0, err
		}
		if err := e.EventSynchronize(end); err != nil {
			return 0, err
		}
		d, err := e.Elapsed(start, end)
		if err != nil {
			return 0, err
		}
		ts = append(ts, d.Seconds()/float64(n))
	}
	slices.Sort(ts)
	return ts[len(ts)/2], nil
}

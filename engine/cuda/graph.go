package cuda

import (
	"errors"
	"fmt"
	"time"
)

// BeginCapture starts recording the engine stream's work into a graph.
//
// Mode: CU_STREAM_CAPTURE_MODE_THREAD_LOCAL. Every driver call of an engine
// runs on its one locked thread, so thread-local mode forbids exactly the
// calls that matter (this engine's syncs and allocations while it captures),
// while engines for other GPUs in the same process, on their own threads,
// keep working; global mode would make their setup fail whenever any engine
// captures. The engine also refuses host syncs and allocations itself (see
// ErrSyncInCapture), so such a bug fails loudly before reaching the driver.
func (e *Engine) BeginCapture() error {
	return e.Do(func() error {
		if e.capturing {
			return errors.New("cuda: BeginCapture: the stream is already capturing")
		}
		if err := e.unrecordable("BeginCapture"); err != nil {
			return err
		}
		if err := e.d.cuStreamBeginCapture(e.stream, CaptureModeThreadLocal); err != nil {
			return fmt.Errorf("cuda: begin capture: %w", err)
		}
		e.capturing, e.poison = true, nil
		return nil
	})
}

// EndCapture stops recording and returns the graph. When a forbidden call
// was made during the capture (see ErrSyncInCapture) or the driver
// invalidated it, the capture is ended, its graph destroyed, and the error
// says why; the stream is usable again either way.
func (e *Engine) EndCapture() (Graph, error) {
	var g Graph
	err := e.Do(func() error {
		if !e.capturing {
			return errors.New("cuda: EndCapture: the stream is not capturing")
		}
		err := e.d.cuStreamEndCapture(e.stream, &g)
		poison := e.poison
		e.capturing, e.poison = false, nil
		if poison != nil || err != nil {
			if g != 0 {
				_ = e.d.cuGraphDestroy(g)
				g = 0
			}
			if poison != nil {
				return fmt.Errorf("cuda: capture discarded: %w", poison)
			}
			return fmt.Errorf("cuda: end capture: %w", err)
		}
		e.graphs[g] = struct{}{}
		return nil
	})
	return g, err
}

// CaptureStatus asks the driver whether the engine stream is capturing.
func (e *Engine) CaptureStatus() (CaptureStatus, error) {
	var s CaptureStatus
	err := e.Do(func() error { return e.d.cuStreamIsCapturing(e.stream, &s) })
	return s, err
}

// Instantiate turns a captured graph into an executable one.
func (e *Engine) Instantiate(g Graph) (GraphExec, error) {
	var x GraphExec
	err := e.Do(func() error {
		if err := e.d.cuGraphInstantiateWithFlags(&x, g, 0); err != nil {
			return fmt.Errorf("cuda: instantiate graph: %w", err)
		}
		e.execs[x] = struct{}{}
		return nil
	})
	return x, err
}

// GraphLaunch replays x on the engine stream. Allocation-free.
func (e *Engine) GraphLaunch(x GraphExec) error {
	if e.onThread() {
		return e.graphLaunch(x)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	e.slot.op, e.slot.exec = opGraphLaunch, x
	return e.roundTrip()
}

func (e *Engine) graphLaunch(x GraphExec) error {
	if err := e.unrecordable("a graph launch"); err != nil {
		return err
	}
	if x == 0 {
		return errors.New("cuda: launch of a nil GraphExec")
	}
	return e.d.cuGraphLaunch(x, e.stream)
}

// GraphExecUpdate updates x in place from g, a graph of the same topology
// (e.g. the same launches recaptured with other scalar arguments). When the
// driver cannot, the error says why and x is unchanged.
func (e *Engine) GraphExecUpdate(x GraphExec, g Graph) error {
	return e.Do(func() error {
		var info graphExecUpdateResultInfo
		if err := e.d.cuGraphExecUpdate(x, g, &info); err != nil {
			return fmt.Errorf("cuda: graph exec update (%s): %w", updateResultText(info.result), err)
		}
		return nil
	})
}

// GraphNodeCount is the number of nodes in g (one per captured launch, copy
// or memset).
func (e *Engine) GraphNodeCount(g Graph) (int, error) {
	var n uint64
	err := e.Do(func() error { return e.d.cuGraphGetNodes(g, nil, &n) })
	return int(n), err
}

// DestroyGraph destroys a graph from EndCapture (its executables stay valid);
// after Close, which destroyed it, it returns nil.
func (e *Engine) DestroyGraph(g Graph) error {
	return e.doRelease(func() error {
		if _, ok := e.graphs[g]; !ok {
			return fmt.Errorf("cuda: destroy graph %#x: not made by this engine, or already destroyed", uintptr(g))
		}
		if err := e.d.cuGraphDestroy(g); err != nil {
			return err // still tracked: a retry, or Close, destroys it
		}
		delete(e.graphs, g)
		return nil
	})
}

// DestroyGraphExec destroys an executable graph (after Close, which destroyed
// it: nil).
func (e *Engine) DestroyGraphExec(x GraphExec) error {
	return e.doRelease(func() error {
		if _, ok := e.execs[x]; !ok {
			return fmt.Errorf("cuda: destroy graph exec %#x: not made by this engine, or already destroyed", uintptr(x))
		}
		if err := e.d.cuGraphExecDestroy(x); err != nil {
			return err // still tracked: a retry, or Close, destroys it
		}
		delete(e.execs, x)
		return nil
	})
}

// NewEvent creates a timing event.
func (e *Engine) NewEvent() (Event, error) { return e.newEvent(eventDefault) }

// NewSyncEvent creates an event only to wait on (no timing, so Elapsed
// refuses it). EventSynchronize spins on it, as on any event made without
// CU_EVENT_BLOCKING_SYNC: the waits it serves are a decode step long.
func (e *Engine) NewSyncEvent() (Event, error) { return e.newEvent(eventDisableTiming) }

func (e *Engine) newEvent(flags uint32) (Event, error) {
	var ev Event
	err := e.Do(func() error {
		if err := e.d.cuEventCreate(&ev, flags); err != nil {
			return fmt.Errorf("cuda: create event: %w", err)
		}
		e.events[ev] = struct{}{}
		return nil
	})
	return ev, err
}

// Record records ev on the engine stream. During capture it is allowed but
// only marks a dependency point: the graph gets no event node, so ev can be
// neither waited on nor timed after the graph runs (RecordTiming can).
func (e *Engine) Record(ev Event) error {
	return e.Do(func() error {
		if err := e.unrecordable("an event record"); err != nil {
			return err
		}
		return e.d.cuEventRecord(ev, e.stream)
	})
}

// eventRecordExternal is CU_EVENT_RECORD_EXTERNAL.
const eventRecordExternal = 1

// RecordTiming records ev on the engine stream such that it can be timed:
// during capture as an event-record node of the graph (the driver's
// external record, CUDA 11.1+), which records ev each time the graph runs;
// otherwise as Record.
func (e *Engine) RecordTiming(ev Event) error {
	return e.Do(func() error {
		if err := e.unrecordable("an event record"); err != nil {
			return err
		}
		if !e.capturing {
			return e.d.cuEventRecord(ev, e.stream)
		}
		return e.d.cuEventRecordWithFlags(ev, e.stream, eventRecordExternal)
	})
}

// EventSynchronize waits for ev. Refused during capture.
func (e *Engine) EventSynchronize(ev Event) error {
	return e.Do(func() error {
		if err := e.refuse("EventSynchronize"); err != nil {
			return err
		}
		return e.d.cuEventSynchronize(ev)
	})
}

// Elapsed is the GPU time between two recorded, completed events
// (resolution about half a microsecond).
func (e *Engine) Elapsed(start, end Event) (time.Duration, error) {
	var ms float32
	err := e.Do(func() error { return e.d.cuEventElapsedTime(&ms, start, end) })
	return time.Duration(float64(ms) * float64(time.Millisecond)), err
}

// DestroyEvent destroys an event from NewEvent (after Close, which destroyed
// it: nil).
func (e *Engine) DestroyEvent(ev Event) error {
	return e.doRelease(func() error {
		if _, ok := e.events[ev]; !ok {
			return fmt.Errorf("cuda: destroy event %#x: not made by this engine, or already destroyed", uintptr(ev))
		}
		if err := e.d.cuEventDestroy(ev); err != nil {
			return err // still tracked: a retry, or Close, destroys it
		}
		delete(e.events, ev)
		return nil
	})
}

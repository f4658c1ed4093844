package cuda

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"
)

// Recording is a sequence of kernel launches that RecordLaunches noted
// instead of running: each launch's kernel, geometry and argument values.
// A Replay runs it as a graph; a later recording of the same kernels with
// other arguments replays on the same graph, its changed nodes updated in
// place, without the host cost of launching each kernel or capturing anew.
// Reuse one Recording: recording into it again keeps its storage.
type Recording struct {
	ls   []recLaunch
	vals []uint64 // every launch's argument slots, launch after launch
	err  error    // the first call the recording could not hold
}

// recLaunch is one recorded launch; its arguments are vals[off:off+n].
type recLaunch struct {
	fn          Function
	grid, block [3]uint32
	shared      uint32
	pdl         bool
	off, n      int
}

// Len is the number of launches recorded.
func (r *Recording) Len() int { return len(r.ls) }

func (r *Recording) add(fn Function, grid, block [3]uint32, shared uint32, p *Params, pdl bool) error {
	if fn == 0 {
		return errors.New("cuda: launch of a nil Function")
	}
	off := len(r.vals)
	r.vals = append(r.vals, p.vals...)
	r.ls = append(r.ls, recLaunch{fn: fn, grid: grid, block: block, shared: shared, pdl: pdl, off: off, n: len(p.vals)})
	return nil
}

// args is launch i's argument values.
func (r *Recording) args(i int) []uint64 { l := r.ls[i]; return r.vals[l.off : l.off+l.n] }

// RecordLaunches runs fn on the engine thread with every kernel launch
// through LaunchParams or LaunchParamsPDL noted into r (emptied first)
// instead of enqueued. Nothing reaches the stream while fn runs: any other
// stream work (a copy, a memset, an event, a graph, a capture, a
// synchronisation, a launch without a Params block, a recording within
// this one) fails, as do the calls a capture refuses (allocations, frees,
// module loads), and RecordLaunches returns that failure even where fn
// swallowed it, so a recording never silently lacks work its eager run
// would have done. Launches recorded do not call the launch observer.
func (e *Engine) RecordLaunches(r *Recording, fn func() error) error {
	return e.Do(func() error {
		if err := e.unrecordable("RecordLaunches"); err != nil {
			return err
		}
		if e.capturing {
			return errors.New("cuda: RecordLaunches: the stream is capturing")
		}
		r.ls, r.vals, r.err = r.ls[:0], r.vals[:0], nil
		e.rec = r
		defer func() { e.rec = nil }()
		err := fn()
		return errors.Join(err, r.err)
	})
}

// unrecordable fails stream work other than a Params launch while
// RecordLaunches records, and marks the recording as failed.
func (e *Engine) unrecordable(what string) error {
	if e.rec == nil {
		return nil
	}
	err := fmt.Errorf("cuda: %s while recording launches (a recording holds launches through LaunchParams and LaunchParamsPDL alone)", what)
	if e.rec.err == nil {
		e.rec.err = err
	}
	return err
}

// Replay is a Recording captured into a graph: Launch runs the graph
// with a recording of the same kernels, first updating the kernel nodes
// whose grid, shared memory or arguments differ from the last ones it ran.
// Its PDL launches keep the L2 window (SetL2Window) in force when it was
// captured. Not safe for concurrent use: one goroutine launches a Replay.
type Replay struct {
	e     *Engine
	g     Graph
	x     GraphExec
	nodes []graphNode // launch i's kernel node in g
	cur   Recording   // the launches x holds now
	// The argument block of a node update: pointers to cur's slots, which
	// the update copies (heap memory, as the driver's hot calls need).
	ptrs []unsafe.Pointer
	kp   *kernelNodeParams
	// Updates counts the kernel nodes Launch has updated.
	Updates int
}

// NewReplay captures r's launches, as they would run on the stream, into
// a graph and instantiates it.
func (e *Engine) NewReplay(r *Recording) (*Replay, error) {
	if r.err != nil {
		return nil, fmt.Errorf("cuda: NewReplay: a failed recording: %w", r.err)
	}
	if r.Len() == 0 {
		return nil, errors.New("cuda: NewReplay: an empty recording")
	}
	p := &Replay{e: e, nodes: make([]graphNode, r.Len()), kp: new(kernelNodeParams)}
	p.cur.ls = slices.Clone(r.ls)
	p.cur.vals = slices.Clone(r.vals)
	p.ptrs = make([]unsafe.Pointer, len(p.cur.vals))
	for i := range p.cur.vals {
		p.ptrs[i] = unsafe.Pointer(&p.cur.vals[i])
	}
	// One Do: no other goroutine's stream work can land in the capture.
	err := e.Do(func() error {
		if err := e.BeginCapture(); err != nil {
			return err
		}
		err := p.capture()
		g, cerr := e.EndCapture()
		if err = errors.Join(err, cerr); err != nil {
			if g != 0 {
				_ = e.DestroyGraph(g)
			}
			return fmt.Errorf("cuda: capture a replay: %w", err)
		}
		x, err := e.Instantiate(g)
		if err != nil {
			_ = e.DestroyGraph(g)
			return err
		}
		p.g, p.x = g, x
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// capture launches cur's launches into the engine's capture, naming each
// one's node: right after a launch, the node the next would depend on.
func (p *Replay) capture() error {
	e := p.e
	for i, l := range p.cur.ls {
		if err := e.launch(l.fn, l.grid, l.block, l.shared, p.argv(i), l.pdl); err != nil {
			return fmt.Errorf("launch %d of %d (%s): %w", i+1, len(p.cur.ls), e.fnNames[l.fn], err)
		}
		var deps unsafe.Pointer
		var st CaptureStatus
		var nd uint64
		if err := e.d.cuStreamGetCaptureInfo(e.stream, &st, nil, nil, &deps, &nd); err != nil {
			return err
		}
		if st != CaptureActive {
			return fmt.Errorf("launch %d of %d: the capture is no longer active (status %d)", i+1, len(p.cur.ls), st)
		}
		if nd != 1 || deps == nil {
			return fmt.Errorf("launch %d of %d: the capture depends on %d nodes after it, not 1", i+1, len(p.cur.ls), nd)
		}
		p.nodes[i] = *(*graphNode)(deps)
	}
	return nil
}

// argv is the kernelParams array of cur's launch i.
func (p *Replay) argv(i int) *unsafe.Pointer {
	l := p.cur.ls[i]
	if l.n == 0 {
		return nil
	}
	return &p.ptrs[l.off]
}

// Matches reports whether r launches the kernels p captured, in order, with
// the same blocks, launch mode and argument counts: what Launch can update
// in place (grids, dynamic shared memory and argument values may differ:
// attn_combine's grows with the splits of the attention bucket).
func (p *Replay) Matches(r *Recording) bool {
	if len(r.ls) != len(p.cur.ls) {
		return false
	}
	for i, l := range r.ls {
		if !l.sameKernel(p.cur.ls[i]) {
			return false
		}
	}
	return true
}

// sameKernel reports whether l and c differ at most in grid, dynamic
// shared memory and arguments.
func (l recLaunch) sameKernel(c recLaunch) bool {
	return l.fn == c.fn && l.block == c.block && l.pdl == c.pdl && l.n == c.n
}

// Mismatch says why r does not match p (nil where it does): the first
// launch that differs, as recorded and as captured.
func (p *Replay) Mismatch(r *Recording) error {
	if len(r.ls) != len(p.cur.ls) {
		return fmt.Errorf("%d launches, the replay %d", len(r.ls), len(p.cur.ls))
	}
	for i, l := range r.ls {
		if c := p.cur.ls[i]; !l.sameKernel(c) {
			return fmt.Errorf("launch %d of %d: %s, the replay's %s", i+1, len(r.ls), p.describe(l), p.describe(c))
		}
	}
	return nil
}

func (p *Replay) describe(l recLaunch) string {
	return fmt.Sprintf("%s block %v pdl %v args %d", p.e.FunctionName(l.fn), l.block, l.pdl, l.n)
}

// Launch enqueues the graph as r's launches: the nodes whose grid, shared
// memory or arguments differ from the graph's are updated first (the
// driver copies the values; launches already enqueued keep theirs). r must
// match (Matches).
func (p *Replay) Launch(r *Recording) error {
	return p.e.Do(func() error {
		if err := p.e.unrecordable("Replay.Launch"); err != nil {
			return err
		}
		if r.err != nil {
			return fmt.Errorf("cuda: Replay.Launch: a failed recording: %w", r.err)
		}
		if err := p.Mismatch(r); err != nil {
			return fmt.Errorf("cuda: Replay.Launch: the recording launches other kernels than the replay captured: %w", err)
		}
		for i, l := range r.ls {
			c := &p.cur.ls[i]
			now, next := p.cur.args(i), r.args(i)
			if l.grid == c.grid && l.shared == c.shared && slices.Equal(now, next) {
				continue
			}
			copy(now, next)
			c.grid, c.shared = l.grid, l.shared
			*p.kp = kernelNodeParams{fn: c.fn, gridX: c.grid[0], gridY: c.grid[1], gridZ: c.grid[2],
				blockX: c.block[0], blockY: c.block[1], blockZ: c.block[2], sharedMem: c.shared, kernelParams: p.argv(i)}
			if err := p.e.d.cuGraphExecKernelNodeSetParams(p.x, p.nodes[i], p.kp); err != nil {
				// The node may hold the old values or the new: the replay
				// no longer knows, so every later Launch fails.
				p.cur.ls = nil
				return fmt.Errorf("cuda: update launch %d (%s): %w", i+1, p.e.fnNames[c.fn], err)
			}
			p.Updates++
		}
		return p.e.graphLaunch(p.x)
	})
}

// Destroy releases the graph; after the engine's Close, which released it,
// it returns nil.
func (p *Replay) Destroy() error {
	return errors.Join(p.e.DestroyGraphExec(p.x), p.e.DestroyGraph(p.g))
}

// ReplaySet keeps the graphs of up to n launch sequences, most recently
// used first: Launch replays the graph a recording matches, capturing one
// where none does and dropping the least recently used beyond n. Not safe
// for concurrent use.
type ReplaySet struct {
	e  *Engine
	n  int
	ps []*Replay
}

// NewReplaySet makes an empty set of at most n graphs (at least 1).
func (e *Engine) NewReplaySet(n int) *ReplaySet { return &ReplaySet{e: e, n: max(1, n)} }

// Launch enqueues r's launches as a graph of the set: the one r matches,
// its changed nodes updated (Replay.Launch), or a new capture of r. A graph
// whose update fails is dropped, since its nodes may hold either launch's
// values.
func (s *ReplaySet) Launch(r *Recording) error {
	i := slices.IndexFunc(s.ps, func(p *Replay) bool { return p.Matches(r) })
	var old *Replay // dropped for the new graph, destroyed once it is launched
	if i < 0 {
		p, err := s.e.NewReplay(r)
		if err != nil {
			return err
		}
		if len(s.ps) == s.n {
			old = s.ps[s.n-1]
			s.ps = s.ps[:s.n-1]
		}
		s.ps = append(s.ps, p)
		i = len(s.ps) - 1
	}
	p := s.ps[i]
	copy(s.ps[1:i+1], s.ps[:i])
	s.ps[0] = p
	if err := p.Launch(r); err != nil {
		s.ps = s.ps[1:]
		return errors.Join(err, p.Destroy(), old.destroy())
	}
	return old.destroy()
}

// destroy is Destroy of a Replay that may be nil.
func (p *Replay) destroy() error {
	if p == nil {
		return nil
	}
	return p.Destroy()
}

// Len is the number of graphs the set holds.
func (s *ReplaySet) Len() int { return len(s.ps) }

// Updates is the kernel nodes the set's graphs have updated.
func (s *ReplaySet) Updates() int {
	n := 0
	for _, p := range s.ps {
		n += p.Updates
	}
	return n
}

// Replays lists the set's graphs, most recently used first.
func (s *ReplaySet) Replays() []*Replay { return slices.Clone(s.ps) }

// Close destroys the set's graphs; the set is empty after.
func (s *ReplaySet) Close() error {
	var errs []error
	for _, p := range s.ps {
		errs = append(errs, p.Destroy())
	}
	s.ps = nil
	return errors.Join(errs...)
}

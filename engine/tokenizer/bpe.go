package tokenizer

import "math"

// BPE merging. A word starts as one symbol per byte (the byte's token) and
// the adjacent pair with the lowest merge rank is merged, leftmost first on
// ties, until no pair has a rank: the order of llama.cpp's and Hugging
// Face's priority queues. merges maps a pair of ids to rank<<32 | result id,
// so comparing the values compares ranks.

// smallWord is the longest word merged by rescanning an array of pair ranks;
// longer ones use a heap over a linked list (O(n log n) instead of O(n²)).
const smallWord = 48

const noMerge = math.MaxUint64

func (t *Tokenizer) pairValue(a, b int32) uint64 {
	return t.merges.get(pairKey(a, b))
}

// mergeSmall merges w (len(w) >= 2) by rescanning the pair values; the
// returned slice is scratch owned by st.
func (t *Tokenizer) mergeSmall(st *encState, w string) []int32 {
	syms := st.syms[:0]
	for i := 0; i < len(w); i++ {
		syms = append(syms, t.byteTok[w[i]])
	}
	vals := st.ranks[:0]
	for i := 0; i+1 < len(syms); i++ {
		vals = append(vals, t.pairValue(syms[i], syms[i+1]))
	}
	for {
		best, bi := uint64(noMerge), -1
		for i, v := range vals {
			if v < best {
				best, bi = v, i
			}
		}
		if bi < 0 {
			break
		}
		syms[bi] = int32(uint32(best))
		copy(syms[bi+1:], syms[bi+2:])
		syms = syms[:len(syms)-1]
		copy(vals[bi:], vals[bi+1:])
		vals = vals[:len(vals)-1]
		if bi > 0 {
			vals[bi-1] = t.pairValue(syms[bi-1], syms[bi])
		}
		if bi < len(vals) {
			vals[bi] = t.pairValue(syms[bi], syms[bi+1])
		}
	}
	st.syms, st.ranks = syms, vals
	return syms
}

// bpeCand is a candidate merge of the symbols at pos and next[pos].
type bpeCand struct {
	key         uint64 // rank<<32 | pos: heap order
	left, right int32  // the ids expected at pos and next[pos]
	result      int32
}

type bpeHeap []bpeCand

func (h *bpeHeap) push(c bpeCand) {
	*h = append(*h, c)
	a := *h
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p].key <= a[i].key {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h *bpeHeap) pop() bpeCand {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(a) {
			break
		}
		m := l
		if r := l + 1; r < len(a) && a[r].key < a[l].key {
			m = r
		}
		if a[i].key <= a[m].key {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	*h = a
	return top
}

// mergeHeap merges w with a min-heap of candidate pairs over a linked list
// of symbols; stale candidates are skipped when popped.
func (t *Tokenizer) mergeHeap(st *encState, w string) []int32 {
	n := len(w)
	syms, next, prev := st.syms[:0], st.next[:0], st.prev[:0]
	for i := 0; i < n; i++ {
		syms = append(syms, t.byteTok[w[i]])
		next = append(next, int32(i+1))
		prev = append(prev, int32(i-1))
	}
	next[n-1] = -1
	h := st.heap[:0]
	try := func(p int32) {
		if p < 0 || next[p] < 0 {
			return
		}
		a, b := syms[p], syms[next[p]]
		if v := t.pairValue(a, b); v != noMerge {
			h.push(bpeCand{key: v&^0xFFFFFFFF | uint64(p), left: a, right: b, result: int32(uint32(v))})
		}
	}
	for i := int32(0); i+1 < int32(n); i++ {
		try(i)
	}
	for len(h) > 0 {
		c := h.pop()
		p := int32(uint32(c.key))
		q := next[p]
		if syms[p] != c.left || q < 0 || syms[q] != c.right {
			continue // stale: one side has merged since
		}
		syms[p] = c.result
		syms[q] = -1
		next[p] = next[q]
		if next[q] >= 0 {
			prev[next[q]] = p
		}
		try(prev[p])
		try(p)
	}
	out := make([]int32, 0, n)
	for p := int32(0); p >= 0; p = next[p] {
		out = append(out, syms[p])
	}
	st.syms, st.next, st.prev, st.heap = syms, next, prev, h
	return out
}

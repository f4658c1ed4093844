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

// pairCacheBits sizes encState's direct-mapped cache of pair lookups:
// 2^14 slots of 16 bytes, 256 KiB, stays in L2 where the 16 MiB merge
// table does not, and answers about half of the lookups after the first
// (byte-pair) round on bench.txt (141k of 272k).
const pairCacheBits = 14

// pair is t.pairValue through st's pair cache.
func (st *encState) pair(t *Tokenizer, a, b int32) uint64 {
	k := pairKey(a, b)
	s := &st.pairs[(k*0x9E3779B97F4A7C15)>>(64-pairCacheBits)]
	if s.key == k|occupied {
		return s.val
	}
	v := t.merges.get(k)
	s.key, s.val = k|occupied, v
	return v
}

// mergeSmall merges w (len(w) >= 2) by rescanning the pair values; the
// returned slice is scratch owned by st.
func (t *Tokenizer) mergeSmall(st *encState, w string) []int32 {
	syms := st.syms[:0]
	for i := 0; i < len(w); i++ {
		syms = append(syms, t.byteTok[w[i]])
	}
	vals := st.ranks[:0]
	for i := 0; i+1 < len(w); i++ {
		vals = append(vals, t.bytePairs[uint16(w[i])<<8|uint16(w[i+1])])
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
		for j := bi + 1; j+1 < len(syms); j++ { // short: a loop beats memmove calls
			syms[j] = syms[j+1]
			vals[j-1] = vals[j]
		}
		syms = syms[:len(syms)-1]
		vals = vals[:len(vals)-1]
		if bi > 0 {
			vals[bi-1] = st.pair(t, syms[bi-1], syms[bi])
		}
		if bi < len(vals) {
			vals[bi] = st.pair(t, syms[bi], syms[bi+1])
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
		if v := st.pair(t, a, b); v != noMerge {
			h.push(bpeCand{key: v&^0xFFFFFFFF | uint64(p), left: a, right: b, result: int32(uint32(v))})
		}
	}
	for i := 0; i+1 < n; i++ {
		if v := t.bytePairs[uint16(w[i])<<8|uint16(w[i+1])]; v != noMerge {
			h.push(bpeCand{key: v&^0xFFFFFFFF | uint64(i), left: syms[i], right: syms[i+1], result: int32(uint32(v))})
		}
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

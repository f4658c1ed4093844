package tokenizer

// pairTable maps a pair of token ids to rank<<32 | result id: an
// open-addressing hash table (linear probing, load ≤ 1/4) over one flat
// array, so that a lookup, hit or miss, usually touches one cache line.
// BPE does one lookup per adjacent pair and most of them miss; Go's map
// costs about twice as much here.
type pairTable struct {
	slots []pairSlot
	mask  uint64
	shift uint
}

type pairSlot struct{ key, val uint64 }

// occupied marks a used slot's key (ids are < 2^31, so bit 63 is free).
const occupied = 1 << 63

func newPairTable(n int) *pairTable {
	size, shift := 1, uint(64)
	for size < 4*n || size < 16 {
		size <<= 1
		shift--
	}
	return &pairTable{slots: make([]pairSlot, size), mask: uint64(size - 1), shift: shift}
}

func (t *pairTable) index(key uint64) uint64 { return (key * 0x9E3779B97F4A7C15) >> t.shift }

// insert adds key unless present; it reports whether it was added.
func (t *pairTable) insert(key, val uint64) bool {
	k := key | occupied
	for i := t.index(key); ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.key == k {
			return false
		}
		if s.key == 0 {
			s.key, s.val = k, val
			return true
		}
	}
}

// get returns the value of key, or noMerge.
func (t *pairTable) get(key uint64) uint64 {
	k := key | occupied
	for i := t.index(key); ; i = (i + 1) & t.mask {
		s := &t.slots[i]
		if s.key == k {
			return s.val
		}
		if s.key == 0 {
			return noMerge
		}
	}
}

// each calls fn for every entry (for tests).
func (t *pairTable) each(fn func(key, val uint64)) {
	for _, s := range t.slots {
		if s.key != 0 {
			fn(s.key&^occupied, s.val)
		}
	}
}

package tokenizer

import "hash/maphash"

// wordCache maps merged words (raw bytes) to their ids. It is an
// open-addressing hash table (linear probing, load ≤ 1/2) whose keys and
// values live in two flat arenas, so a new entry allocates nothing (amortised)
// and the table holds no pointers for the garbage collector to scan: a map
// of string to []int32 cost two allocations per word and a tenth of the
// encode time in GC.
type wordCache struct {
	seed  maphash.Seed
	slots []cacheSlot
	keys  []byte  // the keys, back to back
	ids   []int32 // the values, back to back
	n     int     // entries
}

// cacheSlot is one entry: key keys[off:off+klen], value ids[idOff:idOff+nids].
// klen == 0 marks an empty slot (cached words have two bytes or more).
type cacheSlot struct {
	hash  uint32 // high bits of the key's hash: most mismatches stop here
	off   uint32
	idOff uint32
	klen  uint16
	nids  uint16
}

const (
	cacheLimit    = 1 << 16 // entries; the cache is cleared when full
	cacheMaxWord  = 1 << 10 // longest word cached (bytes); longer ones are rare and not worth it
	cacheMinSlots = 1 << 10
)

func newWordCache() *wordCache {
	return &wordCache{seed: maphash.MakeSeed()}
}

// get returns the ids cached for w, with w's hash to pass to put on a miss.
func (c *wordCache) get(w string) ([]int32, uint64, bool) {
	h := maphash.String(c.seed, w)
	if len(c.slots) == 0 {
		return nil, h, false
	}
	mask := uint64(len(c.slots) - 1)
	h32 := uint32(h >> 32)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &c.slots[i]
		if s.klen == 0 {
			return nil, h, false
		}
		if s.hash == h32 && int(s.klen) == len(w) && string(c.keys[s.off:s.off+uint32(s.klen)]) == w {
			return c.ids[s.idOff : s.idOff+uint32(s.nids)], h, true
		}
	}
}

// put adds w (not present, hash h from get) with a copy of ids.
func (c *wordCache) put(w string, h uint64, ids []int32) {
	if len(w) < 2 || len(w) > cacheMaxWord || len(ids) > cacheMaxWord {
		return
	}
	if c.n >= cacheLimit {
		c.reset()
	}
	if 2*(c.n+1) > len(c.slots) {
		c.grow()
	}
	mask := uint64(len(c.slots) - 1)
	i := h & mask
	for c.slots[i].klen != 0 {
		i = (i + 1) & mask
	}
	c.slots[i] = cacheSlot{
		hash: uint32(h >> 32), off: uint32(len(c.keys)), idOff: uint32(len(c.ids)),
		klen: uint16(len(w)), nids: uint16(len(ids)),
	}
	c.keys = append(c.keys, w...)
	c.ids = append(c.ids, ids...)
	c.n++
}

// reset empties the cache, keeping its memory.
func (c *wordCache) reset() {
	clear(c.slots)
	c.keys, c.ids, c.n = c.keys[:0], c.ids[:0], 0
}

// grow doubles the slots and reinserts the entries.
func (c *wordCache) grow() {
	old := c.slots
	c.slots = make([]cacheSlot, max(cacheMinSlots, 2*len(old)))
	mask := uint64(len(c.slots) - 1)
	for _, s := range old {
		if s.klen == 0 {
			continue
		}
		h := maphash.Bytes(c.seed, c.keys[s.off:s.off+uint32(s.klen)])
		i := h & mask
		for c.slots[i].klen != 0 {
			i = (i + 1) & mask
		}
		c.slots[i] = s
	}
}

package gpu

// Session pairs a model with one cache and implements sample.Decoder
// (DecodeStep, Reset, Len, Capacity) for eager generation and sampling.
type Session struct {
	g  *Model
	cc *Cache
}

// NewSession allocates a cache of capacity tokens for eager decoding.
func (g *Model) NewSession(capacity int) (*Session, error) {
	cc, err := g.NewCache(capacity)
	if err != nil {
		return nil, err
	}
	return &Session{g: g, cc: cc}, nil
}

// DecodeStep appends token and returns the logits (owned by the session,
// valid until the next step).
func (s *Session) DecodeStep(token int32) ([]float32, error) { return s.g.DecodeStep(s.cc, token) }

// Reset empties the cache. A device failure here surfaces at the next step.
func (s *Session) Reset() { _ = s.cc.Reset() }

// Len is the number of tokens in the cache.
func (s *Session) Len() int { return s.cc.Len() }

// Capacity is the most tokens the cache holds.
func (s *Session) Capacity() int { return s.cc.Capacity() }

// Close frees the cache.
func (s *Session) Close() error { return s.cc.Close() }

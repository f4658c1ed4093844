// Package layers holds only a test: that the engine's packages import one
// another in the direction docs/design.md states, so that a convenient
// import against it (a backend reaching into another for a helper) fails
// CI rather than accumulates.
package layers

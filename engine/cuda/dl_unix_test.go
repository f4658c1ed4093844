//go:build !windows

package cuda

import (
	"errors"

	"github.com/ebitengine/purego"
)

// dlopenDetail reports whether err keeps dlopen's own error.
func dlopenDetail(err error) bool {
	var dl purego.Dlerror
	return errors.As(err, &dl)
}

package cuda

import "errors"

// dlopenDetail reports whether err keeps why no driver loads.
func dlopenDetail(err error) bool { return errors.Is(err, errWindows) }

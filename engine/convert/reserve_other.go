//go:build !linux

package convert

import "os"

// reserve claims no room outside Linux: a file too big for its disk fails
// when the disk fills, and WriteFileAtomic removes it then.
func reserve(*os.File, int64) error { return nil }

//go:build !windows

package convert

import "os"

// replace renames tmp to path: rename(2) replaces path atomically, even
// while another process replaces it or has it open.
func replace(tmp, path string) error { return os.Rename(tmp, path) }

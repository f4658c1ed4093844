package cuda

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryBoundEntryPointIsCalled: each entry point of the driver table
// (gen/cudadrv/table.go) has a call in the package's hand-written code. An
// unused one costs more than dead code: New resolves every required entry
// point, so a driver lacking one it never calls would fail New. The table
// had three such (cuCtxSynchronize, cuMemcpyHtoD, cuMemcpyDtoH) and an
// optional one (cuStreamGetCaptureInfo).
func TestEveryBoundEntryPointIsCalled(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "driver_gen.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	for _, a := range driverABI() {
		if !regexp.MustCompile(`\.` + a.name + `\(`).MatchString(src.String()) {
			t.Errorf("%s is bound (driver_gen.go) but never called: drop it from gen/cudadrv/table.go and regenerate", a.name)
		}
	}
}

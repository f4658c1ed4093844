package kernels

import (
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/memra-ai/memra/kernels/internal/kbuild"
)

// fatbin is every kernel of Spec() compiled by nvcc (SASS sm_80/86/89/90 and
// compute_90 PTX, compressed); cuModuleLoadData takes it as is.
//
//go:embed memra.fatbin
var fatbin []byte

//go:embed manifest.json
var manifest []byte

// ManifestInfo says how the embedded fatbin was built: nvcc version, flags,
// sha256 of every source and of the fatbin, and ptxas's per-kernel report.
type ManifestInfo = kbuild.Manifest

// KernelInfo is ptxas's register/shared/stack/spill report for one kernel.
type KernelInfo = kbuild.KernelInfo

// Fatbin returns the embedded fatbin image. The slice is shared: do not modify it.
func Fatbin() []byte { return fatbin }

// Manifest decodes the embedded manifest.json.
func Manifest() (ManifestInfo, error) {
	var m ManifestInfo
	if err := json.Unmarshal(manifest, &m); err != nil {
		return ManifestInfo{}, fmt.Errorf("kernels manifest.json: %w", err)
	}
	return m, nil
}

package cuda

import (
	"strconv"
	"unsafe"
)

// Handles of driver objects. They are plain values: copying one does not
// copy the object, and each is released through the Engine that made it.
type (
	// DevPtr is a device address (CUdeviceptr, 64-bit).
	DevPtr uint64
	// Module is a loaded fatbin/cubin/PTX image (CUmodule).
	Module uintptr
	// Function is a kernel in a Module (CUfunction).
	Function uintptr
	// Stream is a CUDA stream (CUstream).
	Stream uintptr
	// Event is a CUDA event (CUevent), used for timing.
	Event uintptr
	// Graph is a captured, not yet executable graph (CUgraph).
	Graph uintptr
	// GraphExec is an instantiated, launchable graph (CUgraphExec).
	GraphExec uintptr
)

// Add returns p advanced by off bytes.
func (p DevPtr) Add(off uint64) DevPtr { return p + DevPtr(off) }

// launchConfig is CUlaunchConfig (cuda.h): 7 uint32 then, 8-byte aligned,
// the stream, the attribute array and its length; 56 bytes.
type launchConfig struct {
	gridX, gridY, gridZ    uint32
	blockX, blockY, blockZ uint32
	sharedMem              uint32
	_                      uint32
	stream                 Stream
	attrs                  *launchAttribute
	numAttrs               uint32
	_                      uint32
}

// launchAttribute is CUlaunchAttribute: a 4-byte id, 4 bytes of padding and
// a 64-byte value union; 72 bytes.
type launchAttribute struct {
	id    uint32
	_     uint32
	value [64]byte
}

// launchAttrProgrammaticSerialization is CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
// the value's first int, when non-zero, lets the launch overlap the previous
// kernel of the stream, which then must order itself with griddepcontrol.
const launchAttrProgrammaticSerialization = 6

// launchAttrAccessPolicyWindow is CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
// the value is a CUaccessPolicyWindow (accessPolicyWindow).
const launchAttrAccessPolicyWindow = 1

// accessPolicyWindow is CUaccessPolicyWindow: a device range, the fraction
// of it that gets hitProp, and the property of the rest; 32 bytes with its
// tail padding, inside launchAttribute's 64-byte value.
type accessPolicyWindow struct {
	base     DevPtr
	bytes    uint64
	hitRatio float32
	hitProp  uint32
	missProp uint32
	_        uint32
}

// CUaccessProperty values.
const (
	accessStreaming  = 1 // CU_ACCESS_PROPERTY_STREAMING: evicted first
	accessPersisting = 2 // CU_ACCESS_PROPERTY_PERSISTING: kept in the set-aside
)

// Driver-internal handle types.
type (
	cuDevice   int32   // CUdevice
	cuContext  uintptr // CUcontext
	graphNode  uintptr // CUgraphNode
	procStatus int32   // CUdriverProcAddressQueryResult
)

// CUdriverProcAddressQueryResult values.
const (
	procFound          procStatus = 0 // CU_GET_PROC_ADDRESS_SUCCESS
	procSymbolNotFound procStatus = 1 // CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND
	procVersionTooOld  procStatus = 2 // CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
)

// cuGetProcAddressDefault is CU_GET_PROC_ADDRESS_DEFAULT: the legacy
// default-stream variants (memra always passes an explicit stream).
const cuGetProcAddressDefault = 0

// graphExecUpdateResultInfo is CUgraphExecUpdateResultInfo (CUDA 12.0):
// { CUgraphExecUpdateResult result; CUgraphNode errorNode; CUgraphNode errorFromNode; }.
type graphExecUpdateResultInfo struct {
	result        int32
	_             int32 // padding to the pointer alignment of the C struct
	errorNode     graphNode
	errorFromNode graphNode
}

// The C struct is 24 bytes on 64-bit targets; this fails to compile otherwise.
var _ [24 - unsafe.Sizeof(graphExecUpdateResultInfo{})]struct{}
var _ [unsafe.Sizeof(graphExecUpdateResultInfo{}) - 24]struct{}

// DeviceAttribute is a CUdevice_attribute.
type DeviceAttribute int32

// The device attributes memra reads.
const (
	AttrMaxThreadsPerBlock           DeviceAttribute = 1   // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK
	AttrMaxSharedMemoryPerBlock      DeviceAttribute = 8   // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK
	AttrWarpSize                     DeviceAttribute = 10  // CU_DEVICE_ATTRIBUTE_WARP_SIZE
	AttrClockRate                    DeviceAttribute = 13  // CU_DEVICE_ATTRIBUTE_CLOCK_RATE (kHz)
	AttrMultiprocessorCount          DeviceAttribute = 16  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	AttrMemoryClockRate              DeviceAttribute = 36  // CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE (kHz)
	AttrGlobalMemoryBusWidth         DeviceAttribute = 37  // CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH (bits)
	AttrL2CacheSize                  DeviceAttribute = 38  // CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE (bytes)
	AttrComputeCapabilityMajor       DeviceAttribute = 75  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	AttrComputeCapabilityMinor       DeviceAttribute = 76  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
	AttrMaxSharedMemoryPerBlockOptin DeviceAttribute = 97  // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
	AttrMaxSharedMemoryPerMultiproc  DeviceAttribute = 81  // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
	AttrMaxThreadsPerMultiprocessor  DeviceAttribute = 39  // CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR
	AttrMaxPersistingL2CacheSize     DeviceAttribute = 108 // CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE (bytes)
	AttrMaxAccessPolicyWindowSize    DeviceAttribute = 109 // CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE (bytes)
)

// ctxLimit is a CUlimit.
type ctxLimit int32

// limitPersistingL2 is CU_LIMIT_PERSISTING_L2_CACHE_SIZE: the L2 bytes set
// aside for lines an access policy window marks persisting.
const limitPersistingL2 ctxLimit = 0x06

// FuncAttribute is a CUfunction_attribute.
type FuncAttribute int32

// The kernel attributes memra reads or sets.
const (
	FuncMaxThreadsPerBlock        FuncAttribute = 0 // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
	FuncSharedSizeBytes           FuncAttribute = 1 // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES (static)
	FuncLocalSizeBytes            FuncAttribute = 3 // CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES (spills)
	FuncNumRegs                   FuncAttribute = 4 // CU_FUNC_ATTRIBUTE_NUM_REGS
	FuncPTXVersion                FuncAttribute = 5 // CU_FUNC_ATTRIBUTE_PTX_VERSION
	FuncBinaryVersion             FuncAttribute = 6 // CU_FUNC_ATTRIBUTE_BINARY_VERSION
	FuncMaxDynamicSharedSizeBytes FuncAttribute = 8 // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
)

// CaptureMode is a CUstreamCaptureMode.
type CaptureMode int32

// Capture modes (see Engine.BeginCapture for the one memra uses and why).
const (
	CaptureModeGlobal      CaptureMode = 0 // CU_STREAM_CAPTURE_MODE_GLOBAL
	CaptureModeThreadLocal CaptureMode = 1 // CU_STREAM_CAPTURE_MODE_THREAD_LOCAL
	CaptureModeRelaxed     CaptureMode = 2 // CU_STREAM_CAPTURE_MODE_RELAXED
)

// CaptureStatus is a CUstreamCaptureStatus.
type CaptureStatus int32

// Capture states of a stream.
const (
	CaptureNone        CaptureStatus = 0 // CU_STREAM_CAPTURE_STATUS_NONE
	CaptureActive      CaptureStatus = 1 // CU_STREAM_CAPTURE_STATUS_ACTIVE
	CaptureInvalidated CaptureStatus = 2 // CU_STREAM_CAPTURE_STATUS_INVALIDATED
)

func (s CaptureStatus) String() string {
	switch s {
	case CaptureNone:
		return "none"
	case CaptureActive:
		return "active"
	case CaptureInvalidated:
		return "invalidated"
	}
	return "CaptureStatus(" + strconv.Itoa(int(s)) + ")"
}

// Flags.
const (
	streamNonBlocking     = 1 // CU_STREAM_NON_BLOCKING: no implicit sync with the legacy stream
	eventDefault          = 0 // CU_EVENT_DEFAULT: timing enabled
	eventDisableTiming    = 2 // CU_EVENT_DISABLE_TIMING: a marker to wait on, cheaper to record
	memHostAllocPortable  = 1 // CU_MEMHOSTALLOC_PORTABLE
	memHostAllocDeviceMap = 2 // CU_MEMHOSTALLOC_DEVICEMAP: kernels may address it (HostAllocMapped)
)

// graphExecUpdate results (CUgraphExecUpdateResult), for error messages.
func updateResultText(r int32) string {
	switch r {
	case 0:
		return "success"
	case 1:
		return "error"
	case 2:
		return "topology changed"
	case 3:
		return "node type changed"
	case 4:
		return "kernel function changed"
	case 5:
		return "parameters changed in an unsupported way"
	case 6:
		return "not supported"
	case 7:
		return "unsupported function change"
	case 8:
		return "attributes changed"
	}
	return "result " + strconv.Itoa(int(r))
}

// kernelNodeParams is CUDA_KERNEL_NODE_PARAMS_v1: the function, 7 uint32
// (grid, block, dynamic shared memory), then, 8-byte aligned, the
// kernelParams and extra arrays; 56 bytes.
type kernelNodeParams struct {
	fn                     Function
	gridX, gridY, gridZ    uint32
	blockX, blockY, blockZ uint32
	sharedMem              uint32
	kernelParams           *unsafe.Pointer
	extra                  *unsafe.Pointer
}

var _ [56 - unsafe.Sizeof(kernelNodeParams{})]struct{}
var _ [unsafe.Sizeof(kernelNodeParams{}) - 56]struct{}

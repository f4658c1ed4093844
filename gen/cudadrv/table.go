// Package cudadrv holds the declarative table of the CUDA driver API functions
// memra uses and the generator that turns it into a purego binding
// (engine/cuda/driver_gen.go).
//
// Why a table: the driver exports several ABIs under one name (cuMemAlloc vs
// cuMemAlloc_v2, cuStreamBeginCapture with and without a capture mode), and
// binding the wrong one fails silently at run time. Each entry therefore names
// the CUDA version whose ABI it binds; the binding asks cuGetProcAddress for
// exactly that version instead of guessing "_v2" symbol names, and the C
// signature sits next to the Go one for review.
package cudadrv

// Type is the spelling of one parameter type, in C (for review) and in Go
// (package cuda). A Go spelling starting with "*" is a pointer; "unsafe.Pointer"
// is an untyped pointer; anything else is passed by value in one register.
type Type struct {
	C  string
	Go string
}

// Param is one parameter of a driver function, in C order.
type Param struct {
	Name string
	Type Type
}

// Func is one driver entry point.
type Func struct {
	Name     string  // base name given to cuGetProcAddress, e.g. "cuMemAlloc"
	Symbol   string  // the versioned C symbol of that ABI, e.g. "cuMemAlloc_v2"
	Version  int     // cudaVersion passed to cuGetProcAddress: the release that introduced this ABI
	Params   []Param // in C order
	Optional bool    // missing from the driver: the call returns an error instead of New failing
	Loader   bool    // resolved with dlsym(Symbol), not through itself (only cuGetProcAddress)
	// Hot marks a call on the decode path. Its wrapper passes the arguments
	// through a buffer preallocated in the driver instead of SyscallN's
	// variadic slice, which escapes and would allocate on every call. The
	// price is a contract: pointer arguments must point to heap or C memory
	// (never a stack variable), which the wrapper keeps alive for the call.
	Hot bool
	Doc string // one line: what memra uses it for
}

// ResultCode is one CUresult value the binding names.
type ResultCode struct {
	C    string // CUDA_ERROR_OUT_OF_MEMORY
	Code int
	Desc string // short fallback text when cuGetErrorString is unavailable
}

// Table is everything the driver generator needs.
type Table struct {
	Library   string // file dlopen'd at run time
	MinDriver int    // oldest driver (cuDriverGetVersion) the ABIs below need
	Funcs     []Func
	Results   []ResultCode
}

func p(name string, t Type) Param { return Param{name, t} }

// Driver returns the table of every driver function memra binds. The
// versions are the cudaTypedefs.h PFN_<name>_v<version> suffixes of the ABI
// each entry binds (CUDA 12/13 headers); "_v2" symbols are named explicitly.
func Driver() Table {
	// Go-side spellings of the C types, so the table reads like cuda.h.
	tUint := Type{"unsigned int", "uint32"}
	tInt := Type{"int", "int32"}
	tSize := Type{"size_t", "uint64"}
	tU64 := Type{"cuuint64_t", "uint64"}
	tULL := Type{"unsigned long long", "uint64"}
	tUChar := Type{"unsigned char", "uint8"}
	tResult := Type{"CUresult", "Result"}
	tDevice := Type{"CUdevice", "cuDevice"}
	tCtx := Type{"CUcontext", "cuContext"}
	tDptr := Type{"CUdeviceptr", "DevPtr"}
	tModule := Type{"CUmodule", "Module"}
	tFunc := Type{"CUfunction", "Function"}
	tStream := Type{"CUstream", "Stream"}
	tEvent := Type{"CUevent", "Event"}
	tGraph := Type{"CUgraph", "Graph"}
	tExec := Type{"CUgraphExec", "GraphExec"}
	tDevAttr := Type{"CUdevice_attribute", "DeviceAttribute"}
	tFnAttr := Type{"CUfunction_attribute", "FuncAttribute"}
	tCapMode := Type{"CUstreamCaptureMode", "CaptureMode"}
	tLimit := Type{"CUlimit", "ctxLimit"}
	tVoidP := Type{"void *", "unsafe.Pointer"}
	tCVoidP := Type{"const void *", "unsafe.Pointer"}
	tCStr := Type{"const char *", "*byte"}
	tCharBuf := Type{"char *", "*byte"}

	pInt := Type{"int *", "*int32"}
	pSize := Type{"size_t *", "*uint64"}
	pFloat := Type{"float *", "*float32"}
	pDevice := Type{"CUdevice *", "*cuDevice"}
	pCtx := Type{"CUcontext *", "*cuContext"}
	pDptr := Type{"CUdeviceptr *", "*DevPtr"}
	pModule := Type{"CUmodule *", "*Module"}
	pFunc := Type{"CUfunction *", "*Function"}
	pStream := Type{"CUstream *", "*Stream"}
	pEvent := Type{"CUevent *", "*Event"}
	pGraph := Type{"CUgraph *", "*Graph"}
	pExec := Type{"CUgraphExec *", "*GraphExec"}
	pNode := Type{"CUgraphNode *", "*graphNode"}
	pCapStatus := Type{"CUstreamCaptureStatus *", "*CaptureStatus"}
	pCStr := Type{"const char **", "**byte"}
	pVoidP := Type{"void **", "*unsafe.Pointer"}
	pUpdInfo := Type{"CUgraphExecUpdateResultInfo *", "*graphExecUpdateResultInfo"}
	pProcStat := Type{"CUdriverProcAddressQueryResult *", "*procStatus"}
	pFnPtr := Type{"void **", "*uintptr"}
	pLaunchCfg := Type{"const CUlaunchConfig *", "*launchConfig"}
	tNode := Type{"CUgraphNode", "graphNode"}
	pNodes := Type{"const CUgraphNode **", "*unsafe.Pointer"}
	pU64 := Type{"cuuint64_t *", "*uint64"}
	pKernNode := Type{"const CUDA_KERNEL_NODE_PARAMS *", "*kernelNodeParams"}

	return Table{
		Library:   "libcuda.so.1",
		MinDriver: 12000, // cuGetProcAddress_v2, cuGraphExecUpdate_v2 (12.0)
		Funcs: []Func{
			// The loader: the one symbol found with dlsym. The 12.0 ABI added the
			// symbolStatus out-parameter that tells "not found" from "too old".
			{Name: "cuGetProcAddress", Symbol: "cuGetProcAddress_v2", Version: 12000, Loader: true,
				Doc: "resolves every other entry point at an explicit ABI version",
				Params: []Param{p("symbol", tCStr), p("pfn", pFnPtr), p("cudaVersion", tInt),
					p("flags", tU64), p("symbolStatus", pProcStat)}},

			{Name: "cuGetErrorName", Symbol: "cuGetErrorName", Version: 6000,
				Doc:    "names a CUresult (CUDA_ERROR_...)",
				Params: []Param{p("error", tResult), p("pStr", pCStr)}},
			{Name: "cuGetErrorString", Symbol: "cuGetErrorString", Version: 6000,
				Doc:    "describes a CUresult",
				Params: []Param{p("error", tResult), p("pStr", pCStr)}},
			{Name: "cuInit", Symbol: "cuInit", Version: 2000,
				Doc:    "initialises the driver (flags must be 0)",
				Params: []Param{p("flags", tUint)}},
			{Name: "cuDriverGetVersion", Symbol: "cuDriverGetVersion", Version: 2020,
				Doc:    "reports the newest CUDA version the driver supports (e.g. 13000)",
				Params: []Param{p("driverVersion", pInt)}},

			// Devices.
			{Name: "cuDeviceGet", Symbol: "cuDeviceGet", Version: 2000,
				Doc:    "maps an ordinal to a device handle",
				Params: []Param{p("device", pDevice), p("ordinal", tInt)}},
			{Name: "cuDeviceGetCount", Symbol: "cuDeviceGetCount", Version: 2000,
				Doc:    "counts the visible devices",
				Params: []Param{p("count", pInt)}},
			{Name: "cuDeviceGetName", Symbol: "cuDeviceGetName", Version: 2000,
				Doc:    "writes the device's NUL-terminated name into a buffer",
				Params: []Param{p("name", tCharBuf), p("len", tInt), p("dev", tDevice)}},
			{Name: "cuDeviceGetAttribute", Symbol: "cuDeviceGetAttribute", Version: 2000,
				Doc:    "reads one device attribute (SM count, compute capability, L2 size...)",
				Params: []Param{p("pi", pInt), p("attrib", tDevAttr), p("dev", tDevice)}},
			{Name: "cuDeviceTotalMem", Symbol: "cuDeviceTotalMem_v2", Version: 3020,
				Doc:    "reports the device memory size (the _v2 ABI takes a size_t)",
				Params: []Param{p("bytes", pSize), p("dev", tDevice)}},

			// Contexts: the primary context, current on the engine's locked thread.
			{Name: "cuDevicePrimaryCtxRetain", Symbol: "cuDevicePrimaryCtxRetain", Version: 7000,
				Doc:    "retains the device's primary context",
				Params: []Param{p("pctx", pCtx), p("dev", tDevice)}},
			{Name: "cuDevicePrimaryCtxRelease", Symbol: "cuDevicePrimaryCtxRelease_v2", Version: 11000,
				Doc:    "releases the primary context (the 11.0 _v2 ABI)",
				Params: []Param{p("dev", tDevice)}},
			{Name: "cuCtxSetCurrent", Symbol: "cuCtxSetCurrent", Version: 4000,
				Doc:    "binds a context to the calling OS thread",
				Params: []Param{p("ctx", tCtx)}},
			{Name: "cuCtxSetLimit", Symbol: "cuCtxSetLimit", Version: 3010, Optional: true,
				Doc:    "sets a context limit (the L2 set aside for persisting accesses)",
				Params: []Param{p("limit", tLimit), p("value", tSize)}},
			{Name: "cuCtxGetLimit", Symbol: "cuCtxGetLimit", Version: 3010, Optional: true,
				Doc:    "reads a context limit back (the driver rounds the L2 set-aside)",
				Params: []Param{p("pvalue", pSize), p("limit", tLimit)}},
			{Name: "cuCtxResetPersistingL2Cache", Symbol: "cuCtxResetPersistingL2Cache", Version: 11000, Optional: true,
				Doc: "returns every persisting L2 line to normal when the last window is given up"},

			// Modules and functions.
			{Name: "cuModuleLoadData", Symbol: "cuModuleLoadData", Version: 2000,
				Doc:    "loads a fatbin, cubin or NUL-terminated PTX image from memory",
				Params: []Param{p("module", pModule), p("image", tCVoidP)}},
			{Name: "cuModuleUnload", Symbol: "cuModuleUnload", Version: 2000,
				Doc:    "unloads a module",
				Params: []Param{p("hmod", tModule)}},
			{Name: "cuModuleGetFunction", Symbol: "cuModuleGetFunction", Version: 2000,
				Doc:    "finds a kernel by its extern \"C\" name",
				Params: []Param{p("hfunc", pFunc), p("hmod", tModule), p("name", tCStr)}},
			{Name: "cuFuncGetAttribute", Symbol: "cuFuncGetAttribute", Version: 2020,
				Doc:    "reads a kernel attribute (registers, max threads...)",
				Params: []Param{p("pi", pInt), p("attrib", tFnAttr), p("hfunc", tFunc)}},
			{Name: "cuOccupancyMaxActiveBlocksPerMultiprocessor", Symbol: "cuOccupancyMaxActiveBlocksPerMultiprocessor", Version: 6050,
				Doc:    "how many blocks of a kernel one SM holds at once (sizes persistent grids)",
				Params: []Param{p("numBlocks", pInt), p("f", tFunc), p("blockSize", tInt), p("dynamicSMemSize", tSize)}},
			{Name: "cuFuncSetAttribute", Symbol: "cuFuncSetAttribute", Version: 9000,
				Doc:    "sets a kernel attribute (opt-in dynamic shared memory)",
				Params: []Param{p("hfunc", tFunc), p("attrib", tFnAttr), p("value", tInt)}},

			// Memory. The _v2 ABIs (CUDA 3.2) take 64-bit CUdeviceptr and size_t.
			{Name: "cuMemGetInfo", Symbol: "cuMemGetInfo_v2", Version: 3020,
				Doc:    "reports free and total device memory",
				Params: []Param{p("free", pSize), p("total", pSize)}},
			{Name: "cuMemAlloc", Symbol: "cuMemAlloc_v2", Version: 3020,
				Doc:    "allocates device memory",
				Params: []Param{p("dptr", pDptr), p("bytesize", tSize)}},
			{Name: "cuMemFree", Symbol: "cuMemFree_v2", Version: 3020,
				Doc:    "frees device memory",
				Params: []Param{p("dptr", tDptr)}},
			{Name: "cuMemHostAlloc", Symbol: "cuMemHostAlloc", Version: 2020,
				Doc:    "allocates page-locked host memory",
				Params: []Param{p("pp", pVoidP), p("bytesize", tSize), p("flags", tUint)}},
			{Name: "cuMemFreeHost", Symbol: "cuMemFreeHost", Version: 2000,
				Doc:    "frees page-locked host memory",
				Params: []Param{p("ptr", tVoidP)}},
			{Name: "cuMemHostGetDevicePointer", Symbol: "cuMemHostGetDevicePointer_v2", Version: 3020,
				Doc:    "gives the device address of mapped page-locked host memory",
				Params: []Param{p("pdptr", pDptr), p("p", tVoidP), p("Flags", tUint)}},
			{Name: "cuMemcpyHtoDAsync", Symbol: "cuMemcpyHtoDAsync_v2", Version: 3020, Hot: true,
				Doc:    "copies host to device on a stream",
				Params: []Param{p("dstDevice", tDptr), p("srcHost", tCVoidP), p("byteCount", tSize), p("hStream", tStream)}},
			{Name: "cuMemcpyDtoHAsync", Symbol: "cuMemcpyDtoHAsync_v2", Version: 3020, Hot: true,
				Doc:    "copies device to host on a stream",
				Params: []Param{p("dstHost", tVoidP), p("srcDevice", tDptr), p("byteCount", tSize), p("hStream", tStream)}},
			{Name: "cuMemcpyDtoDAsync", Symbol: "cuMemcpyDtoDAsync_v2", Version: 3020, Hot: true,
				Doc:    "copies device to device on a stream",
				Params: []Param{p("dstDevice", tDptr), p("srcDevice", tDptr), p("byteCount", tSize), p("hStream", tStream)}},
			{Name: "cuMemsetD8Async", Symbol: "cuMemsetD8Async", Version: 3020, Hot: true,
				Doc:    "fills bytes on a stream",
				Params: []Param{p("dstDevice", tDptr), p("uc", tUChar), p("n", tSize), p("hStream", tStream)}},
			{Name: "cuMemsetD32Async", Symbol: "cuMemsetD32Async", Version: 3020, Hot: true,
				Doc:    "fills 32-bit words on a stream",
				Params: []Param{p("dstDevice", tDptr), p("ui", tUint), p("n", tSize), p("hStream", tStream)}},

			// Streams and capture.
			{Name: "cuStreamCreate", Symbol: "cuStreamCreate", Version: 2000,
				Doc:    "creates a stream",
				Params: []Param{p("phStream", pStream), p("flags", tUint)}},
			{Name: "cuStreamDestroy", Symbol: "cuStreamDestroy_v2", Version: 4000,
				Doc:    "destroys a stream (the 4.0 _v2 ABI)",
				Params: []Param{p("hStream", tStream)}},
			{Name: "cuStreamSynchronize", Symbol: "cuStreamSynchronize", Version: 2000, Hot: true,
				Doc:    "waits for a stream's work",
				Params: []Param{p("hStream", tStream)}},
			// The plain cuStreamBeginCapture symbol is the 10.0 ABI without a
			// mode; 10.1 added the mode (cuStreamBeginCapture_v2).
			{Name: "cuStreamBeginCapture", Symbol: "cuStreamBeginCapture_v2", Version: 10010,
				Doc:    "starts recording a stream's work into a graph",
				Params: []Param{p("hStream", tStream), p("mode", tCapMode)}},
			{Name: "cuStreamEndCapture", Symbol: "cuStreamEndCapture", Version: 10000,
				Doc:    "stops recording and returns the graph",
				Params: []Param{p("hStream", tStream), p("phGraph", pGraph)}},
			{Name: "cuStreamIsCapturing", Symbol: "cuStreamIsCapturing", Version: 10000,
				Doc:    "reports whether a stream is capturing",
				Params: []Param{p("hStream", tStream), p("captureStatus", pCapStatus)}},

			// Events.
			{Name: "cuEventCreate", Symbol: "cuEventCreate", Version: 2000,
				Doc:    "creates an event",
				Params: []Param{p("phEvent", pEvent), p("flags", tUint)}},
			{Name: "cuEventRecord", Symbol: "cuEventRecord", Version: 2000, Hot: true,
				Doc:    "records an event on a stream",
				Params: []Param{p("hEvent", tEvent), p("hStream", tStream)}},
			{Name: "cuEventRecordWithFlags", Symbol: "cuEventRecordWithFlags", Version: 11010, Optional: true,
				Doc:    "records an event on a stream; with CU_EVENT_RECORD_EXTERNAL during capture it becomes an event-record node of the graph",
				Params: []Param{p("hEvent", tEvent), p("hStream", tStream), p("flags", tUint)}},
			{Name: "cuEventSynchronize", Symbol: "cuEventSynchronize", Version: 2000,
				Doc:    "waits for an event",
				Params: []Param{p("hEvent", tEvent)}},
			{Name: "cuEventElapsedTime", Symbol: "cuEventElapsedTime", Version: 2000,
				Doc:    "milliseconds between two recorded events",
				Params: []Param{p("pMilliseconds", pFloat), p("hStart", tEvent), p("hEnd", tEvent)}},
			{Name: "cuEventDestroy", Symbol: "cuEventDestroy_v2", Version: 4000,
				Doc:    "destroys an event (the 4.0 _v2 ABI)",
				Params: []Param{p("hEvent", tEvent)}},

			// Launch.
			{Name: "cuLaunchKernel", Symbol: "cuLaunchKernel", Version: 4000, Hot: true,
				Doc: "launches a kernel; the parameter values are copied at the call (or at capture)",
				Params: []Param{p("f", tFunc),
					p("gridDimX", tUint), p("gridDimY", tUint), p("gridDimZ", tUint),
					p("blockDimX", tUint), p("blockDimY", tUint), p("blockDimZ", tUint),
					p("sharedMemBytes", tUint), p("hStream", tStream),
					p("kernelParams", pVoidP), p("extra", pVoidP)}},
			{Name: "cuLaunchKernelEx", Symbol: "cuLaunchKernelEx", Version: 11060, Hot: true,
				Doc:    "launches a kernel with launch attributes (programmatic dependent launch on sm_90)",
				Params: []Param{p("config", pLaunchCfg), p("f", tFunc), p("kernelParams", pVoidP), p("extra", pVoidP)}},

			// Graphs. cuGraphInstantiate changed meaning in 12.0; the WithFlags
			// entry (11.4) has had one signature throughout.
			{Name: "cuGraphInstantiateWithFlags", Symbol: "cuGraphInstantiateWithFlags", Version: 11040,
				Doc:    "turns a captured graph into an executable graph",
				Params: []Param{p("phGraphExec", pExec), p("hGraph", tGraph), p("flags", tULL)}},
			{Name: "cuGraphLaunch", Symbol: "cuGraphLaunch", Version: 10000, Hot: true,
				Doc:    "replays an executable graph on a stream",
				Params: []Param{p("hGraphExec", tExec), p("hStream", tStream)}},
			// 12.0 replaced (hErrorNode_out, updateResult_out) by one result-info struct.
			{Name: "cuGraphExecUpdate", Symbol: "cuGraphExecUpdate_v2", Version: 12000,
				Doc:    "updates an executable graph in place from a graph of the same topology",
				Params: []Param{p("hGraphExec", tExec), p("hGraph", tGraph), p("resultInfo", pUpdInfo)}},
			{Name: "cuGraphExecDestroy", Symbol: "cuGraphExecDestroy", Version: 10000,
				Doc:    "destroys an executable graph",
				Params: []Param{p("hGraphExec", tExec)}},
			{Name: "cuGraphDestroy", Symbol: "cuGraphDestroy", Version: 10000,
				Doc:    "destroys a graph",
				Params: []Param{p("hGraph", tGraph)}},
			{Name: "cuGraphGetNodes", Symbol: "cuGraphGetNodes", Version: 10000,
				Doc:    "lists (or, with a nil array, counts) a graph's nodes",
				Params: []Param{p("hGraph", tGraph), p("nodes", pNode), p("numNodes", pSize)}},
			// The 11.3 ABI (_v2) returns the nodes the next captured work will
			// depend on: right after a launch, the launch's own node. 12.3's
			// _v3 adds edge data memra does not read.
			{Name: "cuStreamGetCaptureInfo", Symbol: "cuStreamGetCaptureInfo_v2", Version: 11030,
				Doc: "names the node a capture's last launch became (its dependencies_out)",
				Params: []Param{p("hStream", tStream), p("captureStatus_out", pCapStatus), p("id_out", pU64),
					p("graph_out", pGraph), p("dependencies_out", pNodes), p("numDependencies_out", pSize)}},
			// The 10.1 ABI takes CUDA_KERNEL_NODE_PARAMS_v1 (no kern or ctx fields).
			{Name: "cuGraphExecKernelNodeSetParams", Symbol: "cuGraphExecKernelNodeSetParams", Version: 10010, Hot: true,
				Doc:    "changes one kernel node's grid, shared memory and arguments in an executable graph, for its next launches",
				Params: []Param{p("hGraphExec", tExec), p("hNode", tNode), p("nodeParams", pKernNode)}},
		},
		Results: []ResultCode{
			{"CUDA_SUCCESS", 0, "no error"},
			{"CUDA_ERROR_INVALID_VALUE", 1, "invalid argument"},
			{"CUDA_ERROR_OUT_OF_MEMORY", 2, "out of memory"},
			{"CUDA_ERROR_NOT_INITIALIZED", 3, "driver not initialized"},
			{"CUDA_ERROR_DEINITIALIZED", 4, "driver shutting down"},
			{"CUDA_ERROR_STUB_LIBRARY", 34, "stub driver library loaded instead of the real one"},
			{"CUDA_ERROR_DEVICE_UNAVAILABLE", 46, "device busy or unavailable"},
			{"CUDA_ERROR_NO_DEVICE", 100, "no CUDA-capable device detected"},
			{"CUDA_ERROR_INVALID_DEVICE", 101, "invalid device ordinal"},
			{"CUDA_ERROR_INVALID_IMAGE", 200, "invalid kernel image"},
			{"CUDA_ERROR_INVALID_CONTEXT", 201, "invalid or missing context on this thread"},
			{"CUDA_ERROR_NO_BINARY_FOR_GPU", 209, "no kernel image for this GPU"},
			{"CUDA_ERROR_INVALID_PTX", 218, "PTX JIT compilation failed"},
			{"CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 222, "PTX version newer than the driver supports"},
			{"CUDA_ERROR_INVALID_SOURCE", 300, "invalid source"},
			{"CUDA_ERROR_FILE_NOT_FOUND", 301, "file not found"},
			{"CUDA_ERROR_INVALID_HANDLE", 400, "invalid resource handle"},
			{"CUDA_ERROR_ILLEGAL_STATE", 401, "operation not valid in the current state"},
			{"CUDA_ERROR_NOT_FOUND", 500, "named symbol not found"},
			{"CUDA_ERROR_NOT_READY", 600, "work not yet complete"},
			{"CUDA_ERROR_ILLEGAL_ADDRESS", 700, "illegal memory access"},
			{"CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 701, "too many resources requested for launch"},
			{"CUDA_ERROR_LAUNCH_TIMEOUT", 702, "kernel timed out"},
			{"CUDA_ERROR_ILLEGAL_INSTRUCTION", 715, "illegal instruction"},
			{"CUDA_ERROR_MISALIGNED_ADDRESS", 716, "misaligned address"},
			{"CUDA_ERROR_LAUNCH_FAILED", 719, "kernel failed"},
			{"CUDA_ERROR_NOT_PERMITTED", 800, "operation not permitted"},
			{"CUDA_ERROR_NOT_SUPPORTED", 801, "operation not supported"},
			{"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", 803, "driver and kernel module versions differ"},
			{"CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", 900, "operation not permitted while a stream captures"},
			{"CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", 901, "stream capture invalidated by an earlier error"},
			{"CUDA_ERROR_STREAM_CAPTURE_MERGE", 902, "capture would merge two independent captures"},
			{"CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", 903, "capture was not started on this stream"},
			{"CUDA_ERROR_STREAM_CAPTURE_UNJOINED", 904, "capture forked a stream that was not joined"},
			{"CUDA_ERROR_STREAM_CAPTURE_ISOLATION", 905, "dependency crosses the capture boundary"},
			{"CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", 906, "implicit dependency on the legacy stream during capture"},
			{"CUDA_ERROR_CAPTURED_EVENT", 907, "operation not permitted on an event from a capture"},
			{"CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", 908, "capture ended from another thread"},
			{"CUDA_ERROR_TIMEOUT", 909, "wait timed out"},
			{"CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", 910, "executable graph update not possible"},
			{"CUDA_ERROR_UNKNOWN", 999, "unknown error"},
		},
	}
}

// Macros the AVX2 dot kernels (dot_*_amd64.s) share.

// ZERO4 clears the four vector accumulators Y0-Y3.
#define ZERO4 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3

// HSUM0 adds the eight lanes of Y0 into X0 and leaves the AVX state clean
// for the caller's SSE code.
#define HSUM0 \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS       X1, X0, X0; \
	VHADDPS      X0, X0, X0; \
	VHADDPS      X0, X0, X0; \
	VZEROUPPER

// REDUCE4 adds the accumulators Y0-Y3 into X0 (HSUM0).
#define REDUCE4 \
	VADDPS Y1, Y0, Y0; \
	VADDPS Y3, Y2, Y2; \
	VADDPS Y2, Y0, Y0; \
	HSUM0

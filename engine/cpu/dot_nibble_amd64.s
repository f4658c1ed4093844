#include "textflag.h"
#include "dot_amd64.h"

// func dotNibAVX2(w *byte, x *float32, sc *float32, ng, stride int, tab *[16]int8) float32
// The AVX2 dot product of 4-bit formats whose 32-weight groups are 16
// bytes of nibbles (weights 0-15 in the low nibbles, 16-31 in the high)
// and one f32 scale: Q4_0 (tab −8…7), IQ4_NL and IQ4_XS (tab ggml's
// codebook). Group i's nibbles are at w + i·stride, its scale sc[i]; each
// weight is tab[nibble]·scale, as the dequantisers form it, times x.
TEXT ·dotNibAVX2(SB), NOSPLIT, $0-52
	MOVQ         w+0(FP), SI
	MOVQ         x+8(FP), DI
	MOVQ         sc+16(FP), R8
	MOVQ         ng+24(FP), CX
	MOVQ         stride+32(FP), DX
	MOVQ         tab+40(FP), AX
	VMOVDQU      (AX), X14
	ZERO4
	MOVL         $15, AX
	VMOVD        AX, X15
	VPBROADCASTB X15, X15

nibgroup:
	VBROADCASTSS (R8), Y4
	VMOVDQU      (SI), X8
	VPSRLW       $4, X8, X9
	VPAND        X15, X8, X8
	VPAND        X15, X9, X9
	VPSHUFB      X8, X14, X8
	VPSHUFB      X9, X14, X9
	VPMOVSXBD    X8, Y10
	VPSRLDQ      $8, X8, X8
	VPMOVSXBD    X8, Y11
	VPMOVSXBD    X9, Y12
	VPSRLDQ      $8, X9, X9
	VPMOVSXBD    X9, Y13
	VCVTDQ2PS    Y10, Y10
	VCVTDQ2PS    Y11, Y11
	VCVTDQ2PS    Y12, Y12
	VCVTDQ2PS    Y13, Y13
	VMULPS       Y4, Y10, Y10
	VMULPS       Y4, Y11, Y11
	VMULPS       Y4, Y12, Y12
	VMULPS       Y4, Y13, Y13
	VFMADD231PS  (DI), Y10, Y0
	VFMADD231PS  32(DI), Y11, Y1
	VFMADD231PS  64(DI), Y12, Y2
	VFMADD231PS  96(DI), Y13, Y3
	ADDQ         DX, SI
	ADDQ         $128, DI
	ADDQ         $4, R8
	DECQ         CX
	JNZ          nibgroup
	REDUCE4
	MOVSS        X0, ret+48(FP)
	RET

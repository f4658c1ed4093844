#include "textflag.h"
#include "dot_amd64.h"

// AVX2 + FMA dot products of one stored weight row with x (f32). Four (bf16,
// f16) or one (q8_0, per-block scaled) vector accumulators; the caller
// passes whole 32-element groups and handles any tail in Go.

// func dotBF16AVX2(w *byte, x *float32, n int) float32
TEXT ·dotBF16AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ n+16(FP), CX
	ZERO4

bf16loop:
	VPMOVZXWD (SI), Y4
	VPMOVZXWD 16(SI), Y5
	VPMOVZXWD 32(SI), Y6
	VPMOVZXWD 48(SI), Y7
	VPSLLD    $16, Y4, Y4
	VPSLLD    $16, Y5, Y5
	VPSLLD    $16, Y6, Y6
	VPSLLD    $16, Y7, Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $64, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JNZ  bf16loop
	REDUCE4
	MOVSS        X0, ret+24(FP)
	RET

// func dotF16AVX2(w *byte, x *float32, n int) float32
TEXT ·dotF16AVX2(SB), NOSPLIT, $0-28
	MOVQ w+0(FP), SI
	MOVQ x+8(FP), DI
	MOVQ n+16(FP), CX
	ZERO4

f16loop:
	VCVTPH2PS (SI), Y4
	VCVTPH2PS 16(SI), Y5
	VCVTPH2PS 32(SI), Y6
	VCVTPH2PS 48(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $64, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JNZ  f16loop
	REDUCE4
	MOVSS        X0, ret+24(FP)
	RET

// func dotQ8AVX2(w *byte, x *float32, nb int) float32
// w holds nb q8_0 blocks of 34 bytes: f16 scale d, then 32 int8.
TEXT ·dotQ8AVX2(SB), NOSPLIT, $0-28
	MOVQ   w+0(FP), SI
	MOVQ   x+8(FP), DI
	MOVQ   nb+16(FP), CX
	VXORPS Y0, Y0, Y0

q8loop:
	MOVWLZX      (SI), AX
	VMOVD        AX, X5
	VCVTPH2PS    X5, X5
	VBROADCASTSS X5, Y5
	VPMOVSXBD    2(SI), Y1
	VPMOVSXBD    10(SI), Y2
	VPMOVSXBD    18(SI), Y3
	VPMOVSXBD    26(SI), Y4
	VCVTDQ2PS    Y1, Y1
	VCVTDQ2PS    Y2, Y2
	VCVTDQ2PS    Y3, Y3
	VCVTDQ2PS    Y4, Y4
	VMULPS       (DI), Y1, Y1
	VFMADD231PS  32(DI), Y2, Y1
	VFMADD231PS  64(DI), Y3, Y1
	VFMADD231PS  96(DI), Y4, Y1
	VFMADD231PS  Y5, Y1, Y0
	ADDQ         $34, SI
	ADDQ         $128, DI
	DECQ         CX
	JNZ          q8loop
	HSUM0
	MOVSS        X0, ret+24(FP)
	RET

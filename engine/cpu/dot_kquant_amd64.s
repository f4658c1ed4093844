#include "textflag.h"
#include "dot_amd64.h"

// AVX2 + FMA dot products of K-quant rows with x (f32). The caller unpacks
// each superblock's scales to f32 (gguf.ScalesK4, gguf.ScalesQ6K: 16 floats
// a superblock in sc) so the loops here only widen the quants, form each
// weight as dequantisation does (scale·q − offset in one FMA; Q6_K's
// scale·(q−32) in one multiply; scale·q is exact in f32, so the FMA's single
// rounding gives the dequantiser's value) and multiply-add it with x, in four vector
// accumulators: 8 weights an instruction where the Go path dequantised a
// block into memory first.

// Q4PART takes 8 bytes of qs at off(SI): their low nibbles are weights of
// the chunk's first sub-block (scale Y4, offset Y5), their high nibbles of
// its second (Y6, Y7); each weight, formed in one FMA, times x at xlo(DI)
// or xhi(DI) into acclo or acchi. a and b are scratch.
#define Q4PART(off, xlo, xhi, a, b, acclo, acchi) \
	VPMOVZXBD   off(SI), a; \
	VPSRLD      $4, a, b; \
	VPAND       Y15, a, a; \
	VCVTDQ2PS   a, a; \
	VCVTDQ2PS   b, b; \
	VFMSUB213PS Y5, Y4, a; \
	VFMSUB213PS Y7, Y6, b; \
	VFMADD231PS xlo(DI), a, acclo; \
	VFMADD231PS xhi(DI), b, acchi

// Q5PART is Q4PART with the fifth bits: qh's 8 bytes at off(R9), shifted
// right by X14 (2k), give bit 4 of the low-nibble weights (their bit 0)
// and of the high-nibble ones (bit 1). Scratch Y8-Y12.
#define Q5PART(off, xlo, xhi, acclo, acchi) \
	VPMOVZXBD   off(R9), Y10; \
	VPSRLD      X14, Y10, Y10; \
	VPSLLD      $4, Y10, Y11; \
	VPSLLD      $3, Y10, Y12; \
	VPAND       Y13, Y11, Y11; \
	VPAND       Y13, Y12, Y12; \
	VPMOVZXBD   off(SI), Y8; \
	VPSRLD      $4, Y8, Y9; \
	VPAND       Y15, Y8, Y8; \
	VPOR        Y11, Y8, Y8; \
	VPOR        Y12, Y9, Y9; \
	VCVTDQ2PS   Y8, Y8; \
	VCVTDQ2PS   Y9, Y9; \
	VFMSUB213PS Y5, Y4, Y8; \
	VFMSUB213PS Y7, Y6, Y9; \
	VFMADD231PS xlo(DI), Y8, acclo; \
	VFMADD231PS xhi(DI), Y9, acchi

// Q6TAIL finishes 8 Q6_K weights: low bits in Y11, high bits (at 4-5) in
// Y12; q − 32 times the scale, times x at xoff(DI), into acc.
#define Q6TAIL(scale, xoff, acc) \
	VPOR        Y12, Y11, Y11; \
	VPSUBD      Y13, Y11, Y11; \
	VCVTDQ2PS   Y11, Y11; \
	VMULPS      scale, Y11, Y11; \
	VFMADD231PS xoff(DI), Y11, acc

// func dotQ4KAVX2(w *byte, x *float32, sc *float32, nb int) float32
// w: nb Q4_K blocks of 144 bytes (d, dmin, scales[12], qs[128]); sc: per
// block 8 scales then 8 offsets. Each 32-byte chunk k of qs holds sub-block
// 2k in its low nibbles and 2k+1 in its high ones.
TEXT ·dotQ4KAVX2(SB), NOSPLIT, $0-36
	MOVQ         w+0(FP), SI
	MOVQ         x+8(FP), DI
	MOVQ         sc+16(FP), R8
	MOVQ         nb+24(FP), CX
	ZERO4
	MOVL         $15, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15

q4kblock:
	ADDQ $16, SI
	MOVQ $4, DX

q4kchunk:
	VBROADCASTSS (R8), Y4
	VBROADCASTSS 32(R8), Y5
	VBROADCASTSS 4(R8), Y6
	VBROADCASTSS 36(R8), Y7

	Q4PART(0, 0, 128, Y8, Y9, Y0, Y1)
	Q4PART(8, 32, 160, Y10, Y11, Y2, Y3)
	Q4PART(16, 64, 192, Y8, Y9, Y0, Y1)
	Q4PART(24, 96, 224, Y10, Y11, Y2, Y3)

	ADDQ $32, SI
	ADDQ $256, DI
	ADDQ $8, R8
	DECQ DX
	JNZ  q4kchunk
	ADDQ $32, R8
	DECQ CX
	JNZ  q4kblock
	REDUCE4
	MOVSS X0, ret+32(FP)
	RET

// func dotQ5KAVX2(w *byte, x *float32, sc *float32, nb int) float32
// w: nb Q5_K blocks of 176 bytes (d, dmin, scales[12], qh[32], qs[128]);
// sc as for Q4_K. Sub-block 2k's fifth bits are bit 2k of qh, 2k+1's bit
// 2k+1: qh shifted right by 2k (X14) puts them at bits 0 and 1.
TEXT ·dotQ5KAVX2(SB), NOSPLIT, $0-36
	MOVQ         w+0(FP), SI
	MOVQ         x+8(FP), DI
	MOVQ         sc+16(FP), R8
	MOVQ         nb+24(FP), CX
	ZERO4
	MOVL         $15, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	MOVL         $16, AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13

q5kblock:
	LEAQ 16(SI), R9
	ADDQ $48, SI
	MOVQ $4, DX
	XORL AX, AX

q5kchunk:
	VMOVD        AX, X14
	VBROADCASTSS (R8), Y4
	VBROADCASTSS 32(R8), Y5
	VBROADCASTSS 4(R8), Y6
	VBROADCASTSS 36(R8), Y7

	Q5PART(0, 0, 128, Y0, Y1)
	Q5PART(8, 32, 160, Y2, Y3)
	Q5PART(16, 64, 192, Y0, Y1)
	Q5PART(24, 96, 224, Y2, Y3)

	ADDQ $32, SI
	ADDQ $256, DI
	ADDQ $8, R8
	ADDL $2, AX
	DECQ DX
	JNZ  q5kchunk
	ADDQ $32, R8
	DECQ CX
	JNZ  q5kblock
	REDUCE4
	MOVSS X0, ret+32(FP)
	RET

// func dotQ6KAVX2(w *byte, x *float32, sc *float32, nb int) float32
// w: nb Q6_K blocks of 210 bytes (ql[128], qh[64], scales[16], d); sc: per
// block the 16 scales. In each half of 128, weight l+32i (l < 32, i < 4)
// takes 4 low bits from ql[l] (i = 0, 2) or ql[l+32] (i = 1, 3), low or high
// nibble, and 2 high bits from qh[l] at bit 2i; its scale is l/16 + 2i.
TEXT ·dotQ6KAVX2(SB), NOSPLIT, $0-36
	MOVQ         w+0(FP), SI
	MOVQ         x+8(FP), DI
	MOVQ         sc+16(FP), R8
	MOVQ         nb+24(FP), CX
	ZERO4
	MOVL         $15, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	MOVL         $0x30, AX
	VMOVD        AX, X14
	VPBROADCASTD X14, Y14
	MOVL         $32, AX
	VMOVD        AX, X13
	VPBROADCASTD X13, Y13

q6kblock:
	LEAQ 128(SI), R9
	MOVQ $2, DX

q6khalf:
	MOVQ $4, BX

q6kgroup:
	// BX = 4, 3: scales 0, 2, 4, 6 of this half; BX = 2, 1: 1, 3, 5, 7.
	VBROADCASTSS (R8), Y4
	VBROADCASTSS 8(R8), Y5
	VBROADCASTSS 16(R8), Y6
	VBROADCASTSS 24(R8), Y7
	VPMOVZXBD    (SI), Y8
	VPMOVZXBD    32(SI), Y9
	VPMOVZXBD    (R9), Y10

	VPAND       Y15, Y8, Y11
	VPSLLD      $4, Y10, Y12
	VPAND       Y14, Y12, Y12
	Q6TAIL(Y4, 0, Y0)

	VPAND       Y15, Y9, Y11
	VPSLLD      $2, Y10, Y12
	VPAND       Y14, Y12, Y12
	Q6TAIL(Y5, 128, Y1)

	VPSRLD      $4, Y8, Y11
	VPAND       Y14, Y10, Y12
	Q6TAIL(Y6, 256, Y2)

	VPSRLD      $4, Y9, Y11
	VPSRLD      $2, Y10, Y12
	VPAND       Y14, Y12, Y12
	Q6TAIL(Y7, 384, Y3)

	ADDQ $8, SI
	ADDQ $8, R9
	ADDQ $32, DI
	CMPQ BX, $3
	JNE  q6knext
	ADDQ $4, R8

q6knext:
	DECQ BX
	JNZ  q6kgroup

	// SI and R9 moved 32 bytes, DI 32 floats, R8 one scale: on to the
	// next half (ql +64, qh +32, x +128, scales +8).
	ADDQ $32, SI
	ADDQ $384, DI
	ADDQ $28, R8
	DECQ DX
	JNZ  q6khalf
	ADDQ $82, SI
	DECQ CX
	JNZ  q6kblock

	REDUCE4
	MOVSS X0, ret+32(FP)
	RET

// func prefetchAhead(p *byte, off, n int)
// Prefetches n bytes from p+off into every cache level, a line at a time.
// Prefetches never fault, so the range may run past the row (dotK asks for
// the next chunk, which past a row's end is the next row's start).
TEXT ·prefetchAhead(SB), NOSPLIT, $0-24
	MOVQ p+0(FP), SI
	ADDQ off+8(FP), SI
	MOVQ n+16(FP), CX

pfloop:
	PREFETCHT0 (SI)
	ADDQ       $64, SI
	SUBQ       $64, CX
	JG         pfloop
	RET

// Q3PART forms 8 Q3_K weights: 2 bits from qs at qoff(R9) shifted right by
// X14 (2j), less 4 where their hmask bit (Y13) at hoff(SI) is clear, times
// the scale, times x at xoff(DI), into acc. Scratch Y8, Y9.
#define Q3PART(qoff, hoff, scale, xoff, acc) \
	VPMOVZXBD   qoff(R9), Y8; \
	VPSRLD      X14, Y8, Y8; \
	VPAND       Y15, Y8, Y8; \
	VPMOVZXBD   hoff(SI), Y9; \
	VPAND       Y13, Y9, Y9; \
	VPCMPEQD    Y12, Y9, Y9; \
	VPSLLD      $2, Y9, Y9; \
	VPADDD      Y9, Y8, Y8; \
	VCVTDQ2PS   Y8, Y8; \
	VMULPS      scale, Y8, Y8; \
	VFMADD231PS xoff(DI), Y8, acc

// func dotQ3KAVX2(w *byte, x *float32, sc *float32, nb int) float32
// w: nb Q3_K blocks of 110 bytes (hmask[32], qs[64], scales[12], d); sc:
// per block the 16 scales d·(s−32). In half n of 128 weights, sub-blocks
// 2j and 2j+1 (j < 4) take their 2 bits from qs[32n:][0:16] and [16:32] at
// shift 2j, their third bit from hmask[0:16] and [16:32] at bit 4n+j.
TEXT ·dotQ3KAVX2(SB), NOSPLIT, $0-36
	MOVQ         w+0(FP), SI
	MOVQ         x+8(FP), DI
	MOVQ         sc+16(FP), R8
	MOVQ         nb+24(FP), CX
	ZERO4
	MOVL         $3, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	VPXOR        Y12, Y12, Y12

q3kblock:
	LEAQ 32(SI), R9
	MOVL $1, BX
	MOVQ $2, R10

q3khalf:
	XORL AX, AX
	MOVQ $4, DX

q3kpair:
	VMOVD        AX, X14
	VMOVD        BX, X13
	VPBROADCASTD X13, Y13
	VBROADCASTSS (R8), Y4
	VBROADCASTSS 4(R8), Y5
	Q3PART(0, 0, Y4, 0, Y0)
	Q3PART(8, 8, Y4, 32, Y1)
	Q3PART(16, 16, Y5, 64, Y2)
	Q3PART(24, 24, Y5, 96, Y3)
	ADDQ         $128, DI
	ADDQ         $8, R8
	ADDL         $2, AX
	SHLL         $1, BX
	DECQ         DX
	JNZ          q3kpair

	ADDQ $32, R9
	DECQ R10
	JNZ  q3khalf
	ADDQ $110, SI
	DECQ CX
	JNZ  q3kblock
	REDUCE4
	MOVSS X0, ret+32(FP)
	RET

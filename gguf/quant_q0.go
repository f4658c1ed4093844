package gguf

import "encoding/binary"

// Q4_0 and Q5_0 quantisers: blocks of 32 values sharing one f16 scale d,
// decoded as (q − 8)·d with q in 0..15 (Q4_0) or (q − 16)·d with q in 0..31
// (Q5_0, the fifth bit in qh), as dequant.go reads them.
//
// The rule is ggml's reference one, so a block matches what llama.cpp
// writes. The grid q − 8 runs from −8 to 7: one more level on the negative
// side. Taking max as the value of largest magnitude with its sign and
// d = max/−8 (Q5_0: /−16) puts max exactly on the end point q = 0 of that
// longer side, so only values of the other sign beyond 7.5 steps clamp (to
// q = 15), at most one step off. q = floor(x/d + 8.5), i.e. x/d rounded
// half up, clamped to 0..15 (Q5_0: + 16.5, 0..31); x/d uses the f32 d
// before f16 rounding, as ggml does. An all-zero block gets d = 0 (−0,
// f16 0x8000, as ggml's 0/−8 gives) and q = 8 (16), which decodes to
// zeros.

// quantQ0Block encodes 32 values as one Q4_0 block (18 bytes: d f16 |
// qs[16]) or, with five, one Q5_0 block (22 bytes: d f16 | qh u32 |
// qs[16]). Value j goes to the low nibble of qs[j], value j+16 to its high
// nibble; their fifth bits to bits j and j+16 of qh.
func quantQ0Block(x []float32, out []byte, five bool) {
	x = x[:32]
	zero := float32(8) // the q that decodes to 0
	if five {
		zero = 16
	}
	_, m := extreme(x)
	d := m / -zero
	inv := recip(d)
	off, top := zero+0.5, 2*zero-1
	binary.LittleEndian.PutUint16(out, F32ToF16(d))
	qs := out[len(out)-16:]
	var qh uint32
	for j := 0; j < 16; j++ {
		lo, hi := q0Quant(x[j], inv, off, top), q0Quant(x[j+16], inv, off, top)
		qs[j] = lo&0xf | (hi&0xf)<<4
		qh |= uint32(lo>>4)<<j | uint32(hi>>4)<<(j+16)
	}
	if five {
		binary.LittleEndian.PutUint32(out[2:], qh)
	}
}

// q0Quant is floor(v·inv + off) clamped to 0..top (ggml truncates x/d +
// 8.5, which is at least about 0.5, then caps it). The product is rounded
// to f32 before the add, as ggml's code does, so no fused multiply-add can
// move a tie.
func q0Quant(v, inv, off, top float32) uint8 {
	t := float32(v*inv) + off
	if !(t > 0) {
		t = 0
	}
	return uint8(min(t, top))
}

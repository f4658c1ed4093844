package cuda

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/memra-ai/memra/kernels"
)

// TestCheckImageFatbin: the engine's own fatbin passes; cut short anywhere
// past its magic, or with a size that points past its end, it is refused
// before the driver sees it.
func TestCheckImageFatbin(t *testing.T) {
	fat := kernels.Fatbin()
	if err := checkImage(fat); err != nil {
		t.Fatalf("the embedded fatbin: %v", err)
	}
	for _, n := range []int{4, 15, 16, 17, 100, len(fat) / 2, len(fat) - 1} {
		if err := checkImage(fat[:n]); err == nil || !strings.Contains(err.Error(), "fatbin") {
			t.Errorf("cut to %d bytes: %v", n, err)
		}
	}
	huge := append([]byte{}, fat...)
	binary.LittleEndian.PutUint64(huge[8:], 1<<63)
	if err := checkImage(huge); err == nil {
		t.Error("a fatbin whose size is 2^63 passed")
	}
	// The first entry's payload size made larger than the rest of the file.
	entry := append([]byte{}, fat...)
	binary.LittleEndian.PutUint64(entry[16+8:], uint64(len(fat)))
	if err := checkImage(entry); err == nil || !strings.Contains(err.Error(), "entry at byte 16") {
		t.Errorf("an entry past the end: %v", err)
	}
}

// elf64 builds a 64-bit little-endian ELF of a header, one section with
// contents and a section header table of two (the null one and it).
func elf64() []byte {
	const ehdr, body, shent = 64, 32, 64
	b := make([]byte, ehdr+body+2*shent)
	copy(b, "\x7fELF")
	b[4], b[5] = 2, 1 // 64-bit, little-endian
	le := binary.LittleEndian
	le.PutUint64(b[0x28:], ehdr+body) // section headers after the body
	le.PutUint16(b[0x3A:], shent)
	le.PutUint16(b[0x3C:], 2)
	for i := range body {
		b[ehdr+i] = byte(i + 1)
	}
	s := b[ehdr+body+shent:]
	le.PutUint32(s[4:], 1) // PROGBITS
	le.PutUint64(s[0x18:], ehdr)
	le.PutUint64(s[0x20:], body)
	return b
}

func TestCheckImageELF(t *testing.T) {
	b := elf64()
	if err := checkImage(b); err != nil {
		t.Fatalf("a complete ELF: %v", err)
	}
	for _, n := range []int{4, 63, 64, 100, len(b) - 1} {
		if err := checkImage(b[:n]); err == nil {
			t.Errorf("cut to %d bytes: passed", n)
		}
	}
	// A section whose contents lie past the end; a .bss-like one may.
	far := elf64()
	s := far[64+32+64:]
	binary.LittleEndian.PutUint64(s[0x20:], 1<<40)
	if err := checkImage(far); err == nil || !strings.Contains(err.Error(), "section 1") {
		t.Errorf("a section past the end: %v", err)
	}
	binary.LittleEndian.PutUint32(s[4:], 8) // NOBITS
	if err := checkImage(far); err != nil {
		t.Errorf("a NOBITS section: %v", err)
	}
	// Section headers said to hold 2^16 - 1 entries of 2^16 - 1 bytes.
	many := elf64()
	binary.LittleEndian.PutUint16(many[0x3A:], 0xffff)
	binary.LittleEndian.PutUint16(many[0x3C:], 0xffff)
	if err := checkImage(many); err == nil {
		t.Error("a section table past the end passed")
	}
	big := elf64()
	big[4] = 1 // 32-bit: the driver's cubins are 64-bit
	if err := checkImage(big); err == nil {
		t.Error("a 32-bit ELF passed")
	}
}

// TestCheckImagePTX: text is left to the driver.
func TestCheckImagePTX(t *testing.T) {
	if err := checkImage([]byte(".version 7.8\n.target sm_90\n")); err != nil {
		t.Error(err)
	}
}

// FuzzCheckImage: no input panics, and an image checkImage passes as a
// fatbin has its declared size inside it.
func FuzzCheckImage(f *testing.F) {
	f.Add(kernels.Fatbin()[:64])
	f.Add(elf64())
	f.Add([]byte(".version 7.8\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if checkImage(b) != nil || len(b) < 4 || binary.LittleEndian.Uint32(b) != fatbinMagic {
			return
		}
		if hdr, size := uint64(binary.LittleEndian.Uint16(b[6:])), binary.LittleEndian.Uint64(b[8:]); hdr+size > uint64(len(b)) {
			t.Errorf("passed a fatbin of %d + %d bytes in %d", hdr, size, len(b))
		}
	})
}

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
	// Header fields the driver would follow past the end, or that no cubin has.
	refusesEdits(t, elf64, []imageEdit{
		{"40-byte section headers", func(b []byte) { binary.LittleEndian.PutUint16(b[0x3A:], 40) }, "section headers of 40 bytes, want 64"},
		{"2^16-1 sections", func(b []byte) { binary.LittleEndian.PutUint16(b[0x3C:], 0xffff) }, "past its"},
		{"a 1-byte program header", func(b []byte) {
			binary.LittleEndian.PutUint16(b[0x36:], 1)
			binary.LittleEndian.PutUint16(b[0x38:], 1)
		}, "program headers of 1 bytes, want 56"},
		{"program headers past the end", func(b []byte) {
			binary.LittleEndian.PutUint64(b[0x20:], uint64(len(b)-8))
			binary.LittleEndian.PutUint16(b[0x36:], 56)
			binary.LittleEndian.PutUint16(b[0x38:], 1)
		}, "past its"},
		{"extended numbering", func(b []byte) { binary.LittleEndian.PutUint16(b[0x3C:], 0) }, "extended section numbering"},
		{"names in section 2 of 2", func(b []byte) { binary.LittleEndian.PutUint16(b[0x3E:], 2) }, "section-name table 2 of 2"},
		{"32-bit", func(b []byte) { b[4] = 1 }, "ELF class 1"},
		{"big-endian", func(b []byte) { b[5] = 2 }, "data 2"},
	})
}

// imageEdit changes a valid image; checkImage must then fail with want.
type imageEdit struct {
	name string
	edit func(b []byte)
	want string
}

// refusesEdits applies each edit to a fresh image from valid.
func refusesEdits(t *testing.T, valid func() []byte, edits []imageEdit) {
	t.Helper()
	for _, e := range edits {
		b := valid()
		e.edit(b)
		if err := checkImage(b); err == nil || !strings.Contains(err.Error(), e.want) {
			t.Errorf("%s: %v, want an error containing %q", e.name, err, e.want)
		}
	}
}

// fatbin16 builds a fatbin of two entries, 16-byte headers and 8 and 24
// bytes of payload.
func fatbin16() []byte {
	le := binary.LittleEndian
	b := make([]byte, 16+(16+8)+(16+24))
	le.PutUint32(b, fatbinMagic)
	le.PutUint16(b[4:], 1)
	le.PutUint16(b[6:], 16)
	le.PutUint64(b[8:], uint64(len(b)-16))
	for _, e := range []struct{ off, size int }{{16, 8}, {16 + 24, 24}} {
		le.PutUint32(b[e.off+4:], 16)
		le.PutUint64(b[e.off+8:], uint64(e.size))
	}
	return b
}

func TestCheckImageFatbinEntries(t *testing.T) {
	if err := checkImage(fatbin16()); err != nil {
		t.Fatalf("two whole entries: %v", err)
	}
	refusesEdits(t, fatbin16, []imageEdit{
		{"header size 8", func(b []byte) { binary.LittleEndian.PutUint16(b[6:], 8) }, "header size 8, want at least 16"},
		// The fatbin's size ends 8 bytes into the second entry's header.
		{"a partial entry header", func(b []byte) { binary.LittleEndian.PutUint64(b[8:], 24+8) }, "8 bytes left"},
		{"an entry header of 8 bytes", func(b []byte) { binary.LittleEndian.PutUint32(b[16+4:], 8) }, "entry at byte 16: 8 + 8"},
		{"the last entry 1 byte long", func(b []byte) { binary.LittleEndian.PutUint64(b[40+8:], 25) }, "entry at byte 40: 16 + 25"},
	})
}

// TestCheckImagePTX: text is left to the driver.
func TestCheckImagePTX(t *testing.T) {
	if err := checkImage([]byte(".version 7.8\n.target sm_90\n")); err != nil {
		t.Error(err)
	}
}

// FuzzCheckImage: no input panics; a fatbin checkImage passes has its
// declared size inside it, an ELF its section header table.
func FuzzCheckImage(f *testing.F) {
	f.Add(kernels.Fatbin()[:64])
	f.Add(fatbin16())
	f.Add(elf64())
	f.Add([]byte(".version 7.8\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if checkImage(b) != nil || len(b) < 4 {
			return
		}
		le := binary.LittleEndian
		switch {
		case le.Uint32(b) == fatbinMagic:
			if hdr, size := uint64(le.Uint16(b[6:])), le.Uint64(b[8:]); hdr+size > uint64(len(b)) {
				t.Errorf("passed a fatbin of %d + %d bytes in %d", hdr, size, len(b))
			}
		case string(b[:4]) == "\x7fELF":
			if shoff, shnum := le.Uint64(b[0x28:]), uint64(le.Uint16(b[0x3C:])); shnum > 0 && (shoff > uint64(len(b)) || shnum*elfSection > uint64(len(b))-shoff) {
				t.Errorf("passed an ELF of %d sections at %d in %d bytes", shnum, shoff, len(b))
			}
		}
	})
}

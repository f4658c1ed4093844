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

// fatbinEntries builds a fatbin of entries with 16-byte headers and the
// given payload sizes, the fatbin's size covering exactly them.
func fatbinEntries(sizes ...int) []byte {
	le := binary.LittleEndian
	n := 16
	for _, s := range sizes {
		n += 16 + s
	}
	b := make([]byte, n)
	le.PutUint32(b, fatbinMagic)
	le.PutUint16(b[4:], 1)
	le.PutUint16(b[6:], 16)
	le.PutUint64(b[8:], uint64(n-16))
	off := 16
	for _, s := range sizes {
		le.PutUint32(b[off+4:], 16)
		le.PutUint64(b[off+8:], uint64(s))
		off += 16 + s
	}
	return b
}

// TestCheckImageFatbinBounds: the layouts at the edges of what checkFatbin
// allows. An empty fatbin and an entry of a header alone, ending exactly at
// the fatbin's end, pass; one byte less of either header is refused, with
// the offsets in the text.
func TestCheckImageFatbinBounds(t *testing.T) {
	for name, b := range map[string][]byte{
		"no entries (16 bytes)":                 fatbinEntries(),
		"a last entry of its header alone":      fatbinEntries(8, 0),
		"a single entry of its header alone":    fatbinEntries(0),
		"the first entry's payload of one byte": fatbinEntries(1, 24),
	} {
		if err := checkImage(b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	le := binary.LittleEndian
	refusesEdits(t, func() []byte { return fatbinEntries(8, 24) }, []imageEdit{
		{"header size 15", func(b []byte) { le.PutUint16(b[6:], 15) }, "header size 15, want at least 16"},
		// 16 + 8 + 16 + 24 = 64 bytes after the header; the second entry at
		// byte 40 has 40 of them.
		{"a partial entry header", func(b []byte) { le.PutUint64(b[8:], 24+8) }, "entry at byte 40: 8 bytes left"},
		{"an entry header of 15 bytes", func(b []byte) { le.PutUint32(b[16+4:], 15) }, "entry at byte 16: 15 + 8 bytes"},
		{"an entry header past the end", func(b []byte) { le.PutUint32(b[40+4:], 48) }, "entry at byte 40: 48 + 24 bytes, past the fatbin's end (byte 80)"},
	})
	// The image ends where the fatbin says, 15 bytes into an entry header:
	// reading the header's sizes would run off the slice.
	b := append(fatbinEntries(8), make([]byte, 15)...)
	le.PutUint64(b[8:], 24+15)
	if err := checkImage(b); err == nil || !strings.Contains(err.Error(), "entry at byte 40: 15 bytes left") {
		t.Errorf("15 bytes of an entry header: %v", err)
	}
}

// TestCheckImageShort: fewer than 4 bytes cannot hold a magic number; even
// the first 3 bytes of one are text to checkImage, not a read past the end.
func TestCheckImageShort(t *testing.T) {
	for _, b := range [][]byte{nil, {0x50}, {0x50, 0xED, 0x55}, []byte("\x7fEL")} {
		if err := checkImage(b[:len(b):len(b)]); err != nil {
			t.Errorf("% x: %v", b, err)
		}
	}
}

// elfHead is a bare 64-bit little-endian ELF header: no program or section
// headers at all.
func elfHead() []byte {
	b := make([]byte, 64)
	copy(b, "\x7fELF")
	b[4], b[5] = 2, 1
	return b
}

// elf64Prog is elf64 with a program header table of one entry after its
// section headers.
func elf64Prog() []byte {
	b := append(elf64(), make([]byte, 56)...)
	le := binary.LittleEndian
	le.PutUint64(b[0x20:], 64+32+2*64)
	le.PutUint16(b[0x36:], 56)
	le.PutUint16(b[0x38:], 1)
	return b
}

// elf64One is elf64 with its null section alone.
func elf64One() []byte {
	b := elf64()
	binary.LittleEndian.PutUint16(b[0x3C:], 1)
	return b
}

// TestCheckImageELFBounds: the layouts at the edges of what checkELF
// allows, and the header fields it reads, each at its own offset.
func TestCheckImageELFBounds(t *testing.T) {
	le := binary.LittleEndian
	whole, empty := elf64(), elf64()
	s := whole[64+32+64:]
	le.PutUint64(s[0x18:], 0)
	le.PutUint64(s[0x20:], uint64(len(whole)))
	s = empty[64+32+64:]
	le.PutUint64(s[0x18:], uint64(len(empty)))
	le.PutUint64(s[0x20:], 0)
	for name, b := range map[string][]byte{
		"a bare 64-byte header":                   elfHead(),
		"one program header after the sections":   elf64Prog(),
		"the null section alone":                  elf64One(),
		"a section of the whole file":             whole,
		"an empty section at the end of the file": empty,
	} {
		if err := checkImage(b); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	refusesEdits(t, elf64One, []imageEdit{
		{"one section of 40 bytes", func(b []byte) { le.PutUint16(b[0x3A:], 40) }, "section headers of 40 bytes, want 64"},
		{"names in section 1 of 1", func(b []byte) { le.PutUint16(b[0x3E:], 1) }, "section-name table 1 of 1"},
		{"32-bit big-endian", func(b []byte) { b[4], b[5] = 1, 2 }, "ELF class 1, data 2;"},
	})
	refusesEdits(t, elf64Prog, []imageEdit{
		{"two program headers", func(b []byte) { le.PutUint16(b[0x38:], 2) }, "header tables end past its 280 bytes"},
	})
	// Its size read at its own offset (0x20), not a byte off: 161 bytes at
	// 64 end a byte past the 224.
	refusesEdits(t, elf64, []imageEdit{
		{"a section a byte too long", func(b []byte) { le.PutUint64(b[64+32+64+0x20:], 161) }, "section 1 (161 bytes at 64) ends past its 224 bytes"},
	})
}

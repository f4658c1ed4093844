package cuda

import (
	"encoding/binary"
	"fmt"
)

// checkImage refuses a fatbin or cubin whose own sizes point past its end
// (a truncated or corrupt file): the driver trusts those sizes and would
// read past the buffer. It checks the outer layout alone: the fatbin's
// header and entries (not the compressed ELF inside them), and an ELF's
// header, header tables and sections; the driver judges the contents.
// Anything else is taken as PTX text, which LoadModule ends with a NUL.
func checkImage(b []byte) error {
	switch {
	case len(b) >= 4 && binary.LittleEndian.Uint32(b) == fatbinMagic:
		return checkFatbin(b)
	case len(b) >= 4 && string(b[:4]) == "\x7fELF":
		return checkELF(b)
	}
	return nil
}

// fatbinMagic opens a fatbin: its header is magic u32, version u16, header
// size u16, then the size of the entries after the header, u64; each entry
// starts with kind u16, a u16, its header size u32 and its payload size u64.
const fatbinMagic = 0xBA55ED50

func checkFatbin(b []byte) error {
	if len(b) < 16 {
		return fmt.Errorf("truncated fatbin: %d bytes, less than its 16-byte header", len(b))
	}
	hdr, size := uint64(binary.LittleEndian.Uint16(b[6:])), binary.LittleEndian.Uint64(b[8:])
	if hdr < 16 {
		return fmt.Errorf("corrupt fatbin: header size %d, want at least 16", hdr)
	}
	if size > uint64(len(b)) || hdr+size > uint64(len(b)) {
		return fmt.Errorf("truncated fatbin: its header says %d + %d bytes, the image has %d", hdr, size, len(b))
	}
	for off, end := hdr, hdr+size; off < end; {
		if end-off < 16 {
			return fmt.Errorf("corrupt fatbin: entry at byte %d: %d bytes left, less than an entry's 16-byte header", off, end-off)
		}
		eh, es := uint64(binary.LittleEndian.Uint32(b[off+4:])), binary.LittleEndian.Uint64(b[off+8:])
		if eh < 16 || eh > end-off || es > end-off-eh {
			return fmt.Errorf("corrupt fatbin: entry at byte %d: %d + %d bytes, past the fatbin's end (byte %d)", off, eh, es, end)
		}
		off += eh + es
	}
	return nil
}

// ELF64's fixed sizes: the file header, a program header, a section header.
const (
	elfHeader  = 64
	elfProgram = 56
	elfSection = 64
)

// checkELF checks that a 64-bit little-endian ELF's program and section
// header tables, in ELF64's entry sizes, and every section with contents lie
// inside b, and that its section-name table is one of its sections.
func checkELF(b []byte) error {
	if len(b) < elfHeader {
		return fmt.Errorf("truncated cubin: %d bytes, less than an ELF header's %d", len(b), elfHeader)
	}
	if b[4] != 2 || b[5] != 1 {
		return fmt.Errorf("cubin: ELF class %d, data %d; want 2 and 1 (64-bit little-endian)", b[4], b[5])
	}
	n := uint64(len(b))
	inside := func(off, count, each uint64) bool {
		return count == 0 || off <= n && each <= n && count <= n/max(each, 1) && count*each <= n-off
	}
	le := binary.LittleEndian
	phoff, phent, phnum := le.Uint64(b[0x20:]), uint64(le.Uint16(b[0x36:])), uint64(le.Uint16(b[0x38:]))
	shoff, shent, shnum := le.Uint64(b[0x28:]), uint64(le.Uint16(b[0x3A:])), uint64(le.Uint16(b[0x3C:]))
	shstrndx := uint64(le.Uint16(b[0x3E:]))
	switch {
	case phnum > 0 && phent != elfProgram:
		return fmt.Errorf("cubin: program headers of %d bytes, want %d", phent, elfProgram)
	case shnum > 0 && shent != elfSection:
		return fmt.Errorf("cubin: section headers of %d bytes, want %d", shent, elfSection)
	case shnum == 0 && shoff != 0:
		return fmt.Errorf("cubin: extended section numbering (section count 0 at offset %d) is not one a cubin uses", shoff)
	case shnum > 0 && shstrndx >= shnum:
		return fmt.Errorf("corrupt cubin: section-name table %d of %d sections", shstrndx, shnum)
	case !inside(phoff, phnum, phent) || !inside(shoff, shnum, shent):
		return fmt.Errorf("truncated cubin: its header tables end past its %d bytes", n)
	}
	const shtNobits = 8 // a section without contents in the file (.bss)
	for i := range shnum {
		s := b[shoff+i*shent:]
		if le.Uint32(s[4:]) == shtNobits {
			continue
		}
		if off, size := le.Uint64(s[0x18:]), le.Uint64(s[0x20:]); !inside(off, 1, size) {
			return fmt.Errorf("truncated cubin: section %d (%d bytes at %d) ends past its %d bytes", i, size, off, n)
		}
	}
	return nil
}

package cuda

import (
	"errors"
	"strings"
	"testing"
)

// TestProcResult: each answer of cuGetProcAddress, for a required and an
// optional entry point. The driver answers a missing or too new symbol with
// CUDA_ERROR_NOT_FOUND and the status saying which.
func TestProcResult(t *testing.T) {
	notFound := (*driver)(nil).fail("cuGetProcAddress", ErrNotFound)
	invalid := (*driver)(nil).fail("cuGetProcAddress", ErrInvalidValue)
	for _, c := range []struct {
		name     string
		version  int32
		optional bool
		fn       uintptr
		status   procStatus
		err      error
		wantFn   uintptr
		want     string
	}{
		{"cuFound", 12000, false, 0x1234, procFound, nil, 0x1234, ""},
		{"cuFound", 12000, true, 0x1234, procFound, nil, 0x1234, ""},
		{"cuMissing", 12000, true, 0, procSymbolNotFound, notFound, 0, ""},
		{"cuTooNew", 12030, true, 0, procVersionTooOld, notFound, 0, ""},
		{"cuMissing", 12000, false, 0, procSymbolNotFound, notFound, 0, "resolve cuMissing (CUDA 12.0 ABI): symbol not found in the driver"},
		{"cuTooNew", 12030, false, 0, procVersionTooOld, notFound, 0, "resolve cuTooNew (CUDA 12.3 ABI): the driver is too old for this version"},
		{"cuBroken", 11040, false, 0, procFound, invalid, 0, "resolve cuBroken (CUDA 11.4 ABI): cuGetProcAddress: CUDA_ERROR_INVALID_VALUE (invalid argument)"},
		{"cuBroken", 11040, true, 0x1234, procFound, invalid, 0, "resolve cuBroken (CUDA 11.4 ABI): cuGetProcAddress: CUDA_ERROR_INVALID_VALUE (invalid argument)"},
		{"cuNoAddress", 2000, true, 0, procFound, nil, 0, "resolve cuNoAddress (CUDA 2.0 ABI): driver returned status 0 and no address"},
		{"cuOddStatus", 3020, false, 0x1234, 7, nil, 0, "resolve cuOddStatus (CUDA 3.2 ABI): driver returned status 7 and no address"},
	} {
		fn, err := procResult(c.name, c.version, c.optional, c.fn, c.status, c.err)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if fn != c.wantFn || got != c.want {
			t.Errorf("procResult(%s, %d, optional %v, status %d, %v) = %#x, %q; want %#x, %q",
				c.name, c.version, c.optional, c.status, c.err, fn, got, c.wantFn, c.want)
		}
	}
	// A failed call keeps the driver's error in the chain.
	if _, err := procResult("cuBroken", 11040, false, 0, procFound, invalid); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("a failed call: %v does not wrap CUDA_ERROR_INVALID_VALUE", err)
	}
}

// TestOpenDriverWithoutLoader: a library that loads but has no
// cuGetProcAddress_v2 (libc stands for a pre-12.0 driver) is a setup error
// naming it and the version memra needs, not "no GPU".
func TestOpenDriverWithoutLoader(t *testing.T) {
	if _, err := dlopen("libc.so.6"); err != nil {
		t.Skipf("no libc.so.6: %v", err)
	}
	_, err := openDriver("libc.so.6")
	want := "libc.so.6 has no cuGetProcAddress_v2 (the driver predates CUDA 12.0; memra needs a CUDA 12.0+ driver): "
	if err == nil || !strings.HasPrefix(err.Error(), want) || NoGPU(err) {
		t.Fatalf("openDriver(libc.so.6) = %v, want a setup error starting %q", err, want)
	}
}

// TestVersionString: CUDA's version numbers are 1000·major + 10·minor.
func TestVersionString(t *testing.T) {
	for v, want := range map[int]string{12000: "12.0", 12030: "12.3", 11040: "11.4", 3020: "3.2", 13010: "13.1", 9000: "9.0"} {
		if got := versionString(v); got != want {
			t.Errorf("versionString(%d) = %q, want %q", v, got, want)
		}
	}
}

// TestGoString: the bytes up to the NUL, "" for NULL or an empty string.
func TestGoString(t *testing.T) {
	b := []byte("sm_90\x00junk")
	if got := goString(&b[0]); got != "sm_90" {
		t.Errorf("goString = %q", got)
	}
	if got := goString(&b[5]); got != "" {
		t.Errorf("goString of an empty string = %q", got)
	}
	if got := goString(nil); got != "" {
		t.Errorf("goString(nil) = %q", got)
	}
	if c := cString("cuInit"); string(c) != "cuInit\x00" {
		t.Errorf("cString = %q", c)
	}
}

package wasmcode

import (
	"errors"
	"testing"
)

// leb is the unsigned LEB128 encoding of v.
func leb(v uint32) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// section is a section of id with the given payload.
func section(id byte, payload ...[]byte) []byte {
	var p []byte
	for _, x := range payload {
		p = append(p, x...)
	}
	return append(append([]byte{id}, leb(uint32(len(p)))...), p...)
}

func str(s string) []byte { return append(leb(uint32(len(s))), s...) }

// body is a function body without locals.
func body(code ...byte) []byte {
	b := append([]byte{0}, code...)
	return append(leb(uint32(len(b))), b...)
}

// module builds a module with one imported function, the given bodies
// and names for the defined functions.
func module(bodies [][]byte, names ...string) []byte {
	m := []byte("\x00asm\x01\x00\x00\x00")
	m = append(m, section(2, leb(1), str("go"), str("debug"), []byte{0}, leb(0))...)
	code := leb(uint32(len(bodies)))
	for _, b := range bodies {
		code = append(code, b...)
	}
	m = append(m, section(10, code)...)
	var fn []byte
	fn = append(fn, leb(uint32(len(names)))...)
	for i, n := range names {
		fn = append(fn, leb(uint32(i+1))...)
		fn = append(fn, str(n)...)
	}
	return append(m, section(0, str("name"), []byte{1}, leb(uint32(len(fn))), fn)...)
}

func TestFuncs(t *testing.T) {
	scalar := body(
		0x41, 0xfd, 0x01, // i32.const 253: an 0xfd byte in an immediate
		0x43, 0xfd, 0xfd, 0xfd, 0xfd, // f32.const with 0xfd bytes
		0x1a, 0x1a, // drop, drop
		0x02, 0x40, 0x0c, 0x00, 0x0b, // block, br 0, end
		0x0b)
	vector := body(
		0x20, 0x00, // local.get 0
		0xfd, 0x00, 0x02, 0x00, // v128.load align=2 offset=0
		0xfd, 0x0c, 0xfd, 0xfd, 0xfd, 0xfd, 0xfd, 0xfd, 0xfd, 0xfd, 0xfd, 0xfd, 0xfd, 0xfd, 0xfd, 0xfd, 0xfd, 0xfd, // v128.const
		0xfd, 0xe6, 0x01, // f32x4.mul (LEB 0xe6)
		0xfd, 0x13, // f32x4.splat
		0xfd, 0xe4, 0x01, // f32x4.add
		0xfd, 0x1f, 0x02, // f32x4.extract_lane 2
		0x1a,
		0xfc, 0x0a, 0x00, 0x00, // memory.copy
		0x0b)
	fs, err := Funcs(module([][]byte{scalar, vector}, "pkg.scalar", "pkg.vector"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 2 {
		t.Fatalf("%d functions, want 2", len(fs))
	}
	if fs[0].Index != 1 || fs[0].Name != "pkg.scalar" || fs[0].Total() != 0 {
		t.Errorf("first function %+v, want index 1, pkg.scalar, no SIMD", fs[0])
	}
	want := map[uint32]int{V128Load: 1, 0x0c: 1, F32x4Mul: 1, 0x13: 1, F32x4Add: 1, 0x1f: 1}
	f := fs[1]
	if f.Index != 2 || f.Name != "pkg.vector" || f.Total() != 6 {
		t.Errorf("second function %d %q with %d SIMD instructions, want 2 pkg.vector 6", f.Index, f.Name, f.Total())
	}
	for op, n := range want {
		if f.SIMD[op] != n {
			t.Errorf("SIMD opcode %#x: %d, want %d", op, f.SIMD[op], n)
		}
	}
}

func TestFuncsErrors(t *testing.T) {
	good := module([][]byte{body(0x0b)}, "f")
	for _, tc := range []struct {
		name string
		wasm []byte
	}{
		{"empty", nil},
		{"not wasm", []byte("\x7fELF\x02\x01\x01\x00")},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00")},
		{"truncated", good[:len(good)-3]},
		{"section past the end", append([]byte("\x00asm\x01\x00\x00\x00"), 10, 0x7f, 0)},
		{"unknown opcode", module([][]byte{body(0xff, 0x0b)})},
		{"unknown SIMD opcode", module([][]byte{body(0xfd, 0xff, 0x7f, 0x0b)})},
		{"immediate past the body", module([][]byte{body(0x43, 0, 0)})},
		{"huge LEB", module([][]byte{body(0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x0b)})},
		{"bodies past the end", append([]byte("\x00asm\x01\x00\x00\x00"), section(10, leb(1000))...)},
	} {
		if _, err := Funcs(tc.wasm); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: error %v, want ErrFormat", tc.name, err)
		}
	}
}

// FuzzFuncs: any input gives functions or an ErrFormat error, never a
// panic.
func FuzzFuncs(f *testing.F) {
	f.Add(module([][]byte{body(0xfd, 0xe6, 0x01, 0x0b)}, "f"))
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, err := Funcs(b); err != nil && !errors.Is(err, ErrFormat) {
			t.Fatalf("error %v does not wrap ErrFormat", err)
		}
	})
}

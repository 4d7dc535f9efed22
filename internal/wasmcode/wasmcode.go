// Package wasmcode reads the code of a WebAssembly module: for each function
// defined in it, its name (from the module's "name" section, when present)
// and how often it uses each SIMD128 instruction. Tests use it to check that
// the kernels of the browser build really are vector code.
//
// It decodes every instruction of the binary format's core and SIMD128
// instruction sets (with the bulk-memory and saturating-truncation
// extensions, 0xFC), so a 0xFD byte inside an immediate is never taken for
// a SIMD prefix; an instruction it does not know is an error.
package wasmcode

import (
	"errors"
	"fmt"
)

// Func is one function defined in the module.
type Func struct {
	// Index is the function's index in the module's function index space
	// (imported functions come first).
	Index uint32
	// Name is the function's name from the "name" section, or "".
	Name string
	// SIMD counts the function's SIMD128 instructions by opcode (the
	// number after the 0xFD prefix: 0x0 v128.load, 0xe4 f32x4.add, 0xe6
	// f32x4.mul, ...).
	SIMD map[uint32]int
}

// SIMD128 opcodes (after the 0xFD prefix) that tests look for.
const (
	V128Load  = 0x00
	V128Store = 0x0b
	F32x4Add  = 0xe4
	F32x4Sub  = 0xe5
	F32x4Mul  = 0xe6
	F32x4Div  = 0xe7
	F64x2Add  = 0xf0
	F64x2Mul  = 0xf2
)

// Total is the number of SIMD128 instructions of f.
func (f Func) Total() int {
	n := 0
	for _, c := range f.SIMD {
		n += c
	}
	return n
}

// ErrFormat is wrapped by every error about a malformed module.
var ErrFormat = errors.New("wasmcode: malformed module")

// Funcs decodes the module wasm and returns its defined functions in index
// order.
func Funcs(wasm []byte) ([]Func, error) {
	r := &reader{b: wasm}
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" || wasm[4] != 1 || wasm[5] != 0 || wasm[6] != 0 || wasm[7] != 0 {
		return nil, fmt.Errorf("%w: no WebAssembly version 1 header", ErrFormat)
	}
	r.p = 8
	var imported uint32
	var funcs []Func
	names := map[uint32]string{}
	for r.p < len(r.b) {
		id := r.byte()
		size := r.u32()
		if r.err != nil {
			return nil, r.err
		}
		if uint64(size) > uint64(len(r.b)-r.p) {
			return nil, fmt.Errorf("%w: section %d of %d bytes runs past the end", ErrFormat, id, size)
		}
		sec := &reader{b: r.b[:r.p+int(size)], p: r.p}
		r.p += int(size)
		var err error
		switch id {
		case 0:
			err = sec.names(names)
		case 2:
			imported, err = sec.imports()
		case 10:
			funcs, err = sec.code(imported)
		}
		if err != nil {
			return nil, fmt.Errorf("section %d at byte %d: %w", id, sec.p, err)
		}
	}
	for i := range funcs {
		funcs[i].Name = names[funcs[i].Index]
	}
	return funcs, nil
}

// reader decodes a byte slice; the first error sticks and later reads
// return zeros.
type reader struct {
	b   []byte
	p   int
	err error
}

func (r *reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: "+format, append([]any{ErrFormat}, args...)...)
	}
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.p >= len(r.b) {
		r.fail("unexpected end at byte %d", r.p)
		return 0
	}
	c := r.b[r.p]
	r.p++
	return c
}

// leb reads an unsigned LEB128 number of at most bits bits.
func (r *reader) leb(bits uint) uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		c := r.byte()
		if r.err != nil {
			return 0
		}
		if shift >= bits {
			r.fail("LEB128 number longer than %d bits at byte %d", bits, r.p)
			return 0
		}
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v
		}
	}
}

func (r *reader) u32() uint32 { return uint32(r.leb(32)) }

func (r *reader) skip(n int) {
	if r.err == nil && n > len(r.b)-r.p {
		r.fail("unexpected end at byte %d", r.p)
		return
	}
	if r.err == nil {
		r.p += n
	}
}

func (r *reader) name() string {
	n := r.u32()
	if r.err == nil && uint64(n) > uint64(len(r.b)-r.p) {
		r.fail("name of %d bytes runs past the end", n)
	}
	if r.err != nil {
		return ""
	}
	s := string(r.b[r.p : r.p+int(n)])
	r.p += int(n)
	return s
}

// names reads a custom section; from the "name" section it records the
// function names.
func (r *reader) names(out map[uint32]string) error {
	if r.name() != "name" || r.err != nil {
		return r.err
	}
	for r.p < len(r.b) && r.err == nil {
		id := r.byte()
		size := r.u32()
		if r.err != nil {
			break
		}
		if uint64(size) > uint64(len(r.b)-r.p) {
			r.fail("name subsection of %d bytes runs past the end", size)
			break
		}
		end := r.p + int(size)
		if id == 1 {
			sub := &reader{b: r.b[:end], p: r.p}
			for n := sub.u32(); n > 0 && sub.err == nil; n-- {
				idx := sub.u32()
				out[idx] = sub.name()
			}
			if sub.err != nil {
				return sub.err
			}
		}
		r.p = end
	}
	return r.err
}

// imports reads the import section and returns the number of imported
// functions.
func (r *reader) imports() (uint32, error) {
	var funcs uint32
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		r.name()
		r.name()
		switch kind := r.byte(); kind {
		case 0: // function: type index
			r.u32()
			funcs++
		case 1: // table: reference type, limits
			r.byte()
			r.limits()
		case 2: // memory: limits
			r.limits()
		case 3: // global: value type, mutability
			r.byte()
			r.byte()
		default:
			r.fail("import of unknown kind %d", kind)
		}
	}
	return funcs, r.err
}

func (r *reader) limits() {
	flags := r.byte()
	r.u32()
	if flags&1 != 0 {
		r.u32()
	}
}

// code reads the code section: the bodies of the defined functions, whose
// indices start at first.
func (r *reader) code(first uint32) ([]Func, error) {
	n := r.u32()
	if r.err == nil && uint64(n) > uint64(len(r.b)-r.p) {
		r.fail("%d function bodies in %d bytes", n, len(r.b)-r.p)
	}
	var funcs []Func
	for i := uint32(0); i < n && r.err == nil; i++ {
		size := r.u32()
		if r.err == nil && uint64(size) > uint64(len(r.b)-r.p) {
			r.fail("function body of %d bytes runs past the end", size)
		}
		if r.err != nil {
			break
		}
		body := &reader{b: r.b[:r.p+int(size)], p: r.p}
		r.p += int(size)
		f := Func{Index: first + i, SIMD: map[uint32]int{}}
		if err := body.function(f.SIMD); err != nil {
			return nil, fmt.Errorf("function %d: %w", f.Index, err)
		}
		funcs = append(funcs, f)
	}
	return funcs, r.err
}

// function decodes one function body (locals, then instructions to the end
// of the body), counting the SIMD128 instructions into simd.
func (r *reader) function(simd map[uint32]int) error {
	for n := r.u32(); n > 0 && r.err == nil; n-- {
		r.u32()
		r.byte()
	}
	for r.p < len(r.b) && r.err == nil {
		r.instr(simd)
	}
	return r.err
}

// instr decodes one instruction and its immediates.
func (r *reader) instr(simd map[uint32]int) {
	op := r.byte()
	switch {
	case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if: block type
		if c := r.peek(); c == 0x40 || (c >= 0x6f && c <= 0x7f) {
			r.p++
		} else {
			r.leb(33)
		}
	case op == 0x0c || op == 0x0d || op == 0x10 || op == 0x12: // br, br_if, call, return_call
		r.u32()
	case op == 0x0e: // br_table
		for n := r.u32(); n > 0 && r.err == nil; n-- {
			r.u32()
		}
		r.u32()
	case op == 0x11 || op == 0x13: // call_indirect, return_call_indirect
		r.u32()
		r.u32()
	case op == 0x1c: // select with types
		for n := r.u32(); n > 0 && r.err == nil; n-- {
			r.byte()
		}
	case op >= 0x20 && op <= 0x26: // local, global and table get/set
		r.u32()
	case op >= 0x28 && op <= 0x3e: // loads and stores: memarg
		r.u32()
		r.u32()
	case op == 0x3f || op == 0x40: // memory.size, memory.grow
		r.byte()
	case op == 0x41:
		r.leb(35) // i32.const, signed
	case op == 0x42:
		r.leb(70) // i64.const, signed
	case op == 0x43:
		r.skip(4)
	case op == 0x44:
		r.skip(8)
	case op == 0xd0: // ref.null
		r.byte()
	case op == 0xd2: // ref.func
		r.u32()
	case op == 0xfc:
		r.misc()
	case op == 0xfd:
		sub := r.u32()
		r.simdImm(sub)
		if r.err == nil {
			simd[sub]++
		}
	case op <= 0x01 || op == 0x05 || op == 0x0b || op == 0x0f || op == 0x1a || op == 0x1b ||
		(op >= 0x45 && op <= 0xc4) || op == 0xd1:
		// no immediates
	default:
		r.fail("unknown opcode %#x at byte %d", op, r.p-1)
	}
}

func (r *reader) peek() byte {
	if r.p >= len(r.b) {
		r.fail("unexpected end at byte %d", r.p)
		return 0
	}
	return r.b[r.p]
}

// misc decodes the immediates of a 0xFC instruction.
func (r *reader) misc() {
	switch sub := r.u32(); {
	case sub <= 7: // saturating truncations
	case sub == 8: // memory.init data, memory
		r.u32()
		r.byte()
	case sub == 9 || sub == 13 || (sub >= 15 && sub <= 17): // data.drop, elem.drop, table.grow/size/fill
		r.u32()
	case sub == 10: // memory.copy
		r.byte()
		r.byte()
	case sub == 11: // memory.fill
		r.byte()
	case sub == 12 || sub == 14: // table.init, table.copy
		r.u32()
		r.u32()
	default:
		r.fail("unknown 0xfc instruction %d at byte %d", sub, r.p)
	}
}

// simdImm decodes the immediates of the SIMD128 instruction sub.
func (r *reader) simdImm(sub uint32) {
	switch {
	case sub <= 11 || sub == 92 || sub == 93: // loads, splat loads, store, load-zero: memarg
		r.u32()
		r.u32()
	case sub == 12 || sub == 13: // v128.const, i8x16.shuffle: 16 bytes
		r.skip(16)
	case sub >= 21 && sub <= 34: // extract_lane, replace_lane: lane index
		r.byte()
	case sub >= 84 && sub <= 91: // load_lane, store_lane: memarg, lane index
		r.u32()
		r.u32()
		r.byte()
	case sub <= 0x113: // the other SIMD128 (and relaxed SIMD) instructions: none
	default:
		r.fail("unknown SIMD128 instruction %#x at byte %d", sub, r.p)
	}
}

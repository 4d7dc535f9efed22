package sample

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"strings"
	"testing"
)

// testSample returns a valid sample with distinct, deterministic values;
// attn adds attention probabilities and qkv adds q, k and v.
func testSample(L, H, HKV, N, D int, qkv, attn bool) *Sample {
	s := &Sample{L: L, H: H, N: N}
	fill := func(n int, seed float64) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(math.Sin(seed + float64(i)*0.37))
		}
		return x
	}
	if qkv {
		s.HKV, s.D = HKV, D
		s.Q = fill(L*H*N*D, 1)
		s.K = fill(L*HKV*N*D, 2)
		s.V = fill(L*HKV*N*D, 3)
	}
	if attn {
		s.Attn = make([]float32, L*H*N*N)
		for i := range s.Attn {
			s.Attn[i] = float32(i%N+1) / float32(N*(N+1)/2)
		}
	}
	return s
}

// st builds a safetensors file from a header and a data section.
func st(header string, body []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint64(len(header)))
	b.WriteString(header)
	b.Write(body)
	return b.Bytes()
}

// tinfo is one tensor entry of a safetensors header.
func tinfo(name, dtype string, shape []int, begin, end int) string {
	sh := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(shape)), ","), "[]")
	return fmt.Sprintf(`%q:{"dtype":%q,"shape":[%s],"data_offsets":[%d,%d]}`, name, dtype, sh, begin, end)
}

// header joins entries (and metadata, a JSON object or "") into a header.
func header(meta string, entries ...string) string {
	if meta != "" {
		entries = append([]string{`"__metadata__":` + meta}, entries...)
	}
	return "{" + strings.Join(entries, ",") + "}"
}

// f32s returns n little-endian float32 values i/8.
func f32s(n int) []byte {
	b := make([]byte, 0, 4*n)
	for i := range n {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(i%16)/8))
	}
	return b
}

// f32sWith returns f32s(n) with element i set to v.
func f32sWith(n, i int, v float32) []byte {
	b := f32s(n)
	binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	return b
}

// probAt is element i of rows of n attention probabilities: 1/2 in a column
// that moves from row to row, the other half spread evenly.
func probAt(i, n int) float32 {
	if i%n == (i/n*3+1)%n {
		return 0.5
	}
	return 0.5 / float32(n-1)
}

// probs returns count little-endian float32 values probAt(i, n).
func probs(count, n int) []byte {
	b := make([]byte, 0, 4*count)
	for i := range count {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(probAt(i, n)))
	}
	return b
}

// npyProbs is a C-ordered <f4 .npy of attention probabilities.
func npyProbs(shape ...int) []byte {
	b := npyF32(shape...)
	count := 1
	for _, d := range shape {
		count *= d
	}
	p := probs(count, shape[len(shape)-1])
	return append(b[:len(b)-len(p)], p...)
}

// qkvST is a valid q/k/v safetensors file with L=1 H=2 HKV=1 N=8 D=4 plus the
// given metadata.
func qkvST(meta string) []byte {
	return st(header(meta,
		tinfo("k", "F32", []int{1, 1, 8, 4}, 0, 128),
		tinfo("q", "F32", []int{1, 2, 8, 4}, 128, 384),
		tinfo("v", "F32", []int{1, 1, 8, 4}, 384, 512)), f32s(128))
}

// npy builds a version 1.0 .npy file from a header dictionary and data.
func npy(dict string, data []byte) []byte {
	return npyVersion(1, dict, data)
}

func npyVersion(major byte, dict string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString(npyMagic)
	b.Write([]byte{major, 0})
	pre := 10
	if major >= 2 {
		pre = 12
	}
	dict += strings.Repeat(" ", (64-(pre+len(dict)+1)%64)%64) + "\n"
	if major >= 2 {
		binary.Write(&b, binary.LittleEndian, uint32(len(dict)))
	} else {
		binary.Write(&b, binary.LittleEndian, uint16(len(dict)))
	}
	b.WriteString(dict)
	b.Write(data)
	return b.Bytes()
}

// npyF32 is a C-ordered <f4 .npy of the given shape holding f32s.
func npyF32(shape ...int) []byte {
	n := 1
	parts := make([]string, len(shape))
	for i, d := range shape {
		n *= d
		parts[i] = fmt.Sprint(d)
	}
	tuple := strings.Join(parts, ", ")
	if len(shape) == 1 {
		tuple += ","
	}
	return npy(fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", tuple), f32s(n))
}

// member is one file of a test zip.
type member struct {
	name   string
	data   []byte
	method uint16
	// usize, when not zero, replaces the declared uncompressed size.
	usize uint64
	// badCRC stores a wrong checksum.
	badCRC bool
}

// npz builds a zip of members.
func npz(t testing.TB, ms ...member) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, m := range ms {
		var comp bytes.Buffer
		switch m.method {
		case zip.Store:
			comp.Write(m.data)
		case zip.Deflate:
			fw, err := flate.NewWriter(&comp, flate.BestCompression)
			if err != nil {
				t.Fatal(err)
			}
			fw.Write(m.data)
			fw.Close()
		default:
			comp.Write(m.data) // claimed method, raw bytes
		}
		fh := &zip.FileHeader{
			Name:               m.name,
			Method:             m.method,
			CRC32:              crc32.ChecksumIEEE(m.data),
			CompressedSize64:   uint64(comp.Len()),
			UncompressedSize64: uint64(len(m.data)),
		}
		if m.usize != 0 {
			fh.UncompressedSize64 = m.usize
		}
		if m.badCRC {
			fh.CRC32++
		}
		fw, err := zw.CreateRaw(fh)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(comp.Bytes())
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

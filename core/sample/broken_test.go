package sample

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated files under testdata/")

// brokenCase is one broken file under testdata/broken/: how to make it, and
// what the error of reading it must say.
type brokenCase struct {
	file   string
	build  func(t testing.TB) []byte
	tensor string // the *Error's Tensor
	key    string // the *Error's Key
	want   []string
}

// brokenCases are the broken files. They also seed the fuzz targets.
var brokenCases = []brokenCase{
	// safetensors: the framing.
	{"empty.safetensors", func(testing.TB) []byte { return nil }, "", "", []string{"empty file"}},
	{"short.safetensors", func(testing.TB) []byte { return []byte{1, 2, 3, 4, 5} }, "", "",
		[]string{"5 bytes, too short for the 8-byte header length"}},
	{"header_past_end.safetensors", func(testing.TB) []byte {
		b := qkvST("")
		return b[:100]
	}, "", "", []string{"header length 188 runs past the end of the 100-byte file"}},
	{"header_length_absurd.safetensors", func(testing.TB) []byte {
		b := qkvST("")
		copy(b, []byte{0, 0, 0, 0, 0, 0, 0, 0x40})
		return b
	}, "", "", []string{"header length 4611686018427387904 exceeds the 104857600-byte limit"}},
	{"header_not_object.safetensors", func(testing.TB) []byte { return st(`[1,2,3]  `, nil) }, "", "",
		[]string{"header does not start with '{'"}},
	{"bad_json.safetensors", func(testing.TB) []byte { return st(`{"q":{"dtype":"F32",}`, nil) }, "", "",
		[]string{"safetensors: header", "invalid character"}},
	{"json_trailing.safetensors", func(testing.TB) []byte { return st(`{} {}`, nil) }, "", "",
		[]string{"after the header object"}},
	{"duplicate_key.safetensors", func(testing.TB) []byte {
		return st(header("", tinfo("q", "F32", []int{2, 2}, 0, 16), tinfo("q", "F32", []int{2, 2}, 0, 16)), f32s(4))
	}, "", "", []string{`duplicate key "q"`}},
	{"header_bad_utf8.safetensors", func(testing.TB) []byte { return qkvST("{\"model\":\"a\xffb\"}") }, "", "",
		[]string{"safetensors: header: not valid UTF-8 (byte 27 of "}},
	{"metadata_lone_surrogate.safetensors", func(testing.TB) []byte { return qkvST(`{"model":"a\\\ud800b"}`) }, "", "",
		[]string{`safetensors: header: lone UTF-16 surrogate \ud800 at byte 29 (no character)`}},
	{"metadata_low_surrogate.safetensors", func(testing.TB) []byte { return qkvST(`{"model":"\udc00"}`) }, "", "",
		[]string{`safetensors: header: lone UTF-16 surrogate \udc00 at byte 26 (no character)`}},
	{"metadata_duplicate_key.safetensors", func(testing.TB) []byte { return qkvST(`{"model":"a","model":"b"}`) }, "", "",
		[]string{`safetensors: header: duplicate key "model" in "__metadata__"`}},
	{"tensor_info_duplicate_key.safetensors", func(testing.TB) []byte {
		return st(`{"attn":{"dtype":"F32","shape":[2,2],"dtype":"F16","data_offsets":[0,16]}}`, f32s(4))
	}, "", "", []string{`safetensors: header: duplicate key "dtype" in "attn"`}},
	{"header_length_2_63.safetensors", func(testing.TB) []byte {
		b := qkvST("")
		copy(b, []byte{0, 0, 0, 0, 0, 0, 0, 0x80})
		return b
	}, "", "", []string{"header length 9223372036854775808 exceeds the 104857600-byte limit"}},
	{"header_zero_length.safetensors", func(testing.TB) []byte { return make([]byte, 64) }, "", "",
		[]string{"safetensors: header does not start with '{'"}},
	{"no_tensors.safetensors", func(testing.TB) []byte { return st(`{"__metadata__":{"model":"x"}}`, nil) }, "", "",
		[]string{"no tensors"}},
	// safetensors: tensor entries.
	{"unknown_tensor.safetensors", func(testing.TB) []byte {
		return st(header("", tinfo("Q", "F32", []int{2, 2}, 0, 16)), f32s(4))
	}, "Q", "", []string{"unexpected tensor (want q, k, v and/or attn)"}},
	{"unknown_dtype.safetensors", func(testing.TB) []byte {
		return st(header("", tinfo("attn", "I32", []int{2, 2}, 0, 16)), f32s(4))
	}, "attn", "", []string{`unsupported dtype "I32" (want F32, F16, BF16 or F64)`}},
	{"missing_dtype.safetensors", func(testing.TB) []byte {
		return st(`{"attn":{"shape":[2,2],"data_offsets":[0,16]}}`, f32s(4))
	}, "attn", "", []string{"lacks dtype, shape or data_offsets"}},
	{"fractional_dim.safetensors", func(testing.TB) []byte {
		return st(`{"attn":{"dtype":"F32","shape":[2,2.5],"data_offsets":[0,16]}}`, f32s(4))
	}, "attn", "", []string{"shape [2, 2.5]: dimension 2.5 is not an integer"}},
	{"negative_dim.safetensors", func(testing.TB) []byte {
		return st(`{"attn":{"dtype":"F32","shape":[-2,-2],"data_offsets":[0,16]}}`, f32s(4))
	}, "attn", "", []string{"dimension -2 is not an integer"}},
	{"zero_dim.safetensors", func(testing.TB) []byte {
		return st(header("", tinfo("attn", "F32", []int{0, 0}, 0, 0)), nil)
	}, "attn", "", []string{"shape [0 0]: dimension 0 outside [1, 4194304]"}},
	{"absurd_dims.safetensors", func(testing.TB) []byte {
		return st(header("", tinfo("attn", "F32", []int{1000000000, 1000000000}, 0, 16)), f32s(4))
	}, "attn", "", []string{"dimension 1000000000 outside [1, 4194304]"}},
	{"too_many_elements.safetensors", func(testing.TB) []byte {
		return st(header("", tinfo("attn", "F32", []int{4096, 4096, 4096}, 0, 16)), f32s(4))
	}, "attn", "", []string{"shape [4096 4096 4096] has more than MaxElements = 1073741824 elements"}},
	{"wrong_rank.safetensors", func(testing.TB) []byte {
		return st(header("", tinfo("q", "F32", []int{2, 8, 4}, 0, 256)), f32s(64))
	}, "q", "", []string{"shape [2 8 4] has rank 3, want 4"}},
	{"size_mismatch.safetensors", func(testing.TB) []byte {
		return st(header("",
			tinfo("k", "F16", []int{1, 2, 3, 4}, 0, 96),
			tinfo("q", "F16", []int{1, 2, 3, 4}, 96, 144),
			tinfo("v", "F16", []int{1, 2, 3, 4}, 144, 192)), f32s(48))
	}, "k", "", []string{`sample: size_mismatch.safetensors: tensor "k": data_offsets [0, 96] hold 96 bytes, shape [1 2 3 4] dtype F16 needs 48`}},
	{"offsets_reversed.safetensors", func(testing.TB) []byte {
		return st(header("", tinfo("attn", "F32", []int{2, 2}, 16, 0)), f32s(4))
	}, "attn", "", []string{"data_offsets [16, 0] end before they begin"}},
	{"offsets_out_of_range.safetensors", func(testing.TB) []byte {
		return st(header("", tinfo("attn", "F32", []int{2, 2}, 1<<40, 1<<40+16)), f32s(4))
	}, "attn", "", []string{"data_offsets [1099511627776, 1099511627792] run past the end of the 16-byte data section"}},
	{"offsets_overflow.safetensors", func(testing.TB) []byte {
		return st(`{"attn":{"dtype":"F32","shape":[2,2],"data_offsets":[18446744073709551615,18446744073709551631]}}`, f32s(4))
	}, "attn", "", []string{"is not a non-negative integer"}},
	{"offsets_overlap.safetensors", func(testing.TB) []byte {
		return st(header("",
			tinfo("k", "F32", []int{1, 1, 8, 4}, 0, 128),
			tinfo("q", "F32", []int{1, 2, 8, 4}, 64, 320),
			tinfo("v", "F32", []int{1, 1, 8, 4}, 320, 448)), f32s(112))
	}, "q", "", []string{`data_offsets [64, 320] overlap tensor "k" at [0, 128]`}},
	{"offsets_gap.safetensors", func(testing.TB) []byte {
		return st(header("",
			tinfo("k", "F32", []int{1, 1, 8, 4}, 0, 128),
			tinfo("q", "F32", []int{1, 2, 8, 4}, 132, 388),
			tinfo("v", "F32", []int{1, 1, 8, 4}, 388, 516)), f32s(129))
	}, "q", "", []string{"data_offsets [132, 388] leave a gap of 4 bytes"}},
	{"trailing_data.safetensors", func(testing.TB) []byte {
		return append(qkvST(""), 0, 0, 0, 0)
	}, "", "", []string{"4 bytes of data after the last tensor"}},
	{"truncated_data.safetensors", func(testing.TB) []byte {
		b := qkvST("")
		return b[:len(b)-3]
	}, "v", "", []string{"data_offsets [384, 512] run past the end of the 509-byte data section (truncated?)"}},
	// safetensors: shapes that do not fit together.
	{"missing_v.safetensors", func(testing.TB) []byte {
		return st(header("",
			tinfo("k", "F32", []int{1, 1, 8, 4}, 0, 128),
			tinfo("q", "F32", []int{1, 2, 8, 4}, 128, 384)), f32s(96))
	}, "v", "", []string{"missing: q, k and v go together"}},
	{"shape_mismatch.safetensors", func(testing.TB) []byte {
		return st(header("",
			tinfo("k", "F32", []int{1, 1, 7, 4}, 0, 112),
			tinfo("q", "F32", []int{1, 2, 8, 4}, 112, 368),
			tinfo("v", "F32", []int{1, 1, 7, 4}, 368, 480)), f32s(120))
	}, "k", "", []string{"shape [1 1 7 4] does not fit q [1 2 8 4]: want [1, Hkv, 8, 4]"}},
	{"gqa_mismatch.safetensors", func(testing.TB) []byte {
		return st(header("",
			tinfo("k", "F32", []int{1, 2, 8, 4}, 0, 256),
			tinfo("q", "F32", []int{1, 3, 8, 4}, 256, 640),
			tinfo("v", "F32", []int{1, 2, 8, 4}, 640, 896)), f32s(224))
	}, "k", "", []string{"2 KV heads do not divide the 3 query heads"}},
	{"v_mismatch.safetensors", func(testing.TB) []byte {
		return st(header("",
			tinfo("k", "F32", []int{1, 1, 8, 4}, 0, 128),
			tinfo("q", "F32", []int{1, 2, 8, 4}, 128, 384),
			tinfo("v", "F32", []int{1, 2, 8, 4}, 384, 640)), f32s(160))
	}, "v", "", []string{"shape [1 2 8 4] differs from k [1 1 8 4]"}},
	{"attn_not_square.safetensors", func(testing.TB) []byte {
		return st(header("", tinfo("attn", "F32", []int{2, 3}, 0, 24)), f32s(6))
	}, "attn", "", []string{"shape [2 3]: not square"}},
	{"attn_mismatch_q.safetensors", func(testing.TB) []byte {
		return st(header("",
			tinfo("attn", "F32", []int{1, 1, 8, 8}, 0, 256),
			tinfo("k", "F32", []int{1, 1, 8, 4}, 256, 384),
			tinfo("q", "F32", []int{1, 2, 8, 4}, 384, 640),
			tinfo("v", "F32", []int{1, 1, 8, 4}, 640, 768)), f32s(192))
	}, "attn", "", []string{"shape [1 1 8 8] does not fit q [1 2 8 4]: want [1, 2, 8, 8]"}},
	// safetensors: the numbers.
	{"nan.safetensors", func(testing.TB) []byte {
		return st(header("",
			tinfo("k", "F32", []int{1, 1, 8, 4}, 0, 128),
			tinfo("q", "F32", []int{1, 2, 8, 4}, 128, 384),
			tinfo("v", "F32", []int{1, 1, 8, 4}, 384, 512)), f32sWith(128, 32+13, float32(nanValue())))
	}, "q", "", []string{"non-finite value NaN at [0 0 3 1] (flat index 13)"}},
	{"inf_f16.safetensors", func(testing.TB) []byte {
		return st(header("", tinfo("attn", "F16", []int{2, 2}, 0, 8)), []byte{0, 0x3c, 0, 0x7c, 0, 0, 0, 0})
	}, "attn", "", []string{"non-finite value +Inf at [0 0 0 1] (flat index 1)"}},
	{"f64_overflow.safetensors", func(testing.TB) []byte {
		b := make([]byte, 32)
		copy(b[16:], []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x47}) // 2^128
		return st(header("", tinfo("attn", "F64", []int{2, 2}, 0, 32)), b)
	}, "attn", "", []string{"F64 value 3.402823669209385e+38 at [1 0] (flat index 2) overflows float32"}},
	// safetensors: metadata.
	{"metadata_not_string.safetensors", func(testing.TB) []byte { return qkvST(`{"prefix":6}`) }, "", "prefix",
		[]string{"value 6 is not a string"}},
	{"metadata_not_object.safetensors", func(testing.TB) []byte { return qkvST(`[1]`) }, "", "",
		[]string{"__metadata__ is not an object of strings"}},
	{"format_2.safetensors", func(testing.TB) []byte { return qkvST(`{"haeols.format":"2"}`) }, "", "haeols.format",
		[]string{`unsupported format "2" (this reader knows "1")`}},
	{"prefix_not_int.safetensors", func(testing.TB) []byte { return qkvST(`{"prefix":"six"}`) }, "", "prefix",
		[]string{`"six" is not a non-negative integer`}},
	{"prefix_out_of_range.safetensors", func(testing.TB) []byte { return qkvST(`{"prefix":"9"}`) }, "", "prefix",
		[]string{"prefix 9 out of range [2, N=8]"}},
	{"scale_nan.safetensors", func(testing.TB) []byte { return qkvST(`{"scale":"NaN"}`) }, "", "scale",
		[]string{`"NaN" is not a finite non-negative number`}},
	{"tokens_count.safetensors", func(testing.TB) []byte { return qkvST(`{"tokens":"[\"a\",\"b\",\"c\"]"}`) }, "", "tokens",
		[]string{"3 tokens for N=8 positions"}},
	{"tokens_bad_json.safetensors", func(testing.TB) []byte { return qkvST(`{"tokens":"[\"a\",1]"}`) }, "", "tokens",
		[]string{"not a JSON array of strings"}},
	{"needle_outside_prefix.safetensors", func(testing.TB) []byte { return qkvST(`{"prefix":"6","needles":"[2,6]"}`) }, "", "needles",
		[]string{"needle position 6 outside the prefix [0, 6)"}},
	{"needle_probe_outside.safetensors", func(testing.TB) []byte { return qkvST(`{"prefix":"6","needle_probes":"[2]"}`) }, "", "needle_probes",
		[]string{"needle probe 2 outside the probes [0, 2)"}},
	// .npy
	{"npy_no_magic.npy", func(testing.TB) []byte { return []byte("NUMPY but not really, and long enough") }, "attn", "",
		[]string{`missing the \x93NUMPY magic`}},
	{"npy_short.npy", func(testing.TB) []byte { return []byte(npyMagic + "\x01") }, "attn", "",
		[]string{"7-byte file is too short for the header"}},
	{"npy_version.npy", func(testing.TB) []byte { return npyVersion(9, "{}", nil) }, "attn", "",
		[]string{"unsupported format version 9.0"}},
	{"npy_header_past_end.npy", func(testing.TB) []byte { return npyF32(4, 4)[:100] }, "attn", "",
		[]string{"header length 118 runs past the end of the 100-byte array"}},
	{"npy_fortran.npy", func(testing.TB) []byte {
		return npy("{'descr': '<f4', 'fortran_order': True, 'shape': (4, 4), }", f32s(16))
	}, "attn", "", []string{"fortran_order is True"}},
	{"npy_int.npy", func(testing.TB) []byte {
		return npy("{'descr': '<i4', 'fortran_order': False, 'shape': (4, 4), }", f32s(16))
	}, "attn", "", []string{`unsupported dtype "<i4"`}},
	{"npy_structured.npy", func(testing.TB) []byte {
		return npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4, 4), }", f32s(16))
	}, "attn", "", []string{"descr: want a quoted string"}},
	{"npy_bad_dict.npy", func(testing.TB) []byte {
		return npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4) 'x'}", f32s(16))
	}, "attn", "", []string{`want ',' or '}' after "shape"`}},
	{"npy_missing_key.npy", func(testing.TB) []byte {
		return npy("{'descr': '<f4', 'shape': (4, 4), }", f32s(16))
	}, "attn", "", []string{`missing key "fortran_order"`}},
	{"npy_huge_dim.npy", func(testing.TB) []byte {
		return npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 4), }", f32s(16))
	}, "attn", "", []string{"dimension 99999999999999999999 is too large"}},
	{"npy_absurd_dims.npy", func(testing.TB) []byte {
		return npy("{'descr': '<f4', 'fortran_order': False, 'shape': (10000000, 10000000), }", f32s(16))
	}, "attn", "", []string{"dimension 10000000 outside [1, 4194304]"}},
	{"npy_too_many_elements.npy", func(testing.TB) []byte {
		return npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }", f32s(16))
	}, "attn", "", []string{"shape [1000000 1000000] has more than MaxElements"}},
	{"npy_rank1.npy", func(testing.TB) []byte { return npyF32(16) }, "attn", "",
		[]string{"shape [16] has rank 1, want [N, N], [H, N, N] or [L, H, N, N]"}},
	{"npy_truncated.npy", func(testing.TB) []byte { b := npyF32(4, 4); return b[:len(b)-4] }, "attn", "",
		[]string{"60 bytes of data, shape [4 4] dtype <f4 needs 64"}},
	{"npy_not_square.npy", func(testing.TB) []byte { return npyF32(4, 5) }, "attn", "",
		[]string{"shape [4 5]: not square"}},
	{"npy_nan.npy", func(testing.TB) []byte {
		return npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4, 4), }", f32sWith(32, 21, float32(nanValue())))
	}, "attn", "", []string{"non-finite value NaN at [0 1 1 1] (flat index 21)"}},
	{"attn_negative.npy", func(testing.TB) []byte {
		b := npyProbs(4, 4)
		binary.LittleEndian.PutUint32(b[len(b)-64+4*5:], math.Float32bits(-0.125))
		return b
	}, "attn", "", []string{"value -0.125 at [0 0 1 1] (flat index 5) is not a probability (attn must hold softmax rows)"}},
	{"attn_row_sum.safetensors", func(testing.TB) []byte {
		b := probs(32, 4)
		binary.LittleEndian.PutUint32(b[4*(6*4+1):], 0) // drop 1/6 from row 2 of head 1
		return st(header("", tinfo("attn", "F32", []int{2, 4, 4}, 0, 128)), b)
	}, "attn", "", []string{"row [0 1 2] sums to 0.833333, want 1 ± 0.01"}},
	// .npz
	{"npz_attn_logits.npz", func(t testing.TB) []byte {
		return npz(t, member{name: "attn.npy", data: npyF32(1, 4, 4), method: zip.Deflate})
	}, "attn", "", []string{"value 1.125 at [0 0 2 1] (flat index 9) is not a probability"}},
	{"npz_missing_k.npz", func(t testing.TB) []byte {
		return npz(t, member{name: "q.npy", data: npyF32(1, 2, 8, 4)}, member{name: "v.npy", data: npyF32(1, 1, 8, 4)})
	}, "k", "", []string{"missing: q, k and v go together"}},
	{"npz_shape_mismatch.npz", func(t testing.TB) []byte {
		return npz(t, member{name: "q.npy", data: npyF32(1, 2, 8, 4)}, member{name: "k.npy", data: npyF32(1, 1, 8, 3)},
			member{name: "v.npy", data: npyF32(1, 1, 8, 3)})
	}, "k", "", []string{"shape [1 1 8 3] does not fit q [1 2 8 4]"}},
	{"npz_unknown_member.npz", func(t testing.TB) []byte {
		return npz(t, member{name: "arr_0.npy", data: npyF32(4, 4)})
	}, "arr_0", "", []string{`member "arr_0.npy": unexpected array`, "numpy.savez(f, q=q, k=k, v=v)"}},
	{"npz_empty.npz", func(t testing.TB) []byte { return npz(t) }, "", "", []string{"npz: no arrays"}},
	{"npz_fortran.npz", func(t testing.TB) []byte {
		return npz(t, member{name: "attn.npy", data: npy("{'descr': '<f4', 'fortran_order': True, 'shape': (4, 4), }", f32s(16)), method: zip.Deflate})
	}, "attn", "", []string{"fortran_order is True"}},
	{"npz_bomb.npz", func(t testing.TB) []byte {
		return npz(t, member{name: "attn.npy", data: npyF32(4, 4), method: zip.Deflate, usize: 1 << 40})
	}, "attn", "", []string{"to 1099511627776 bytes, more than this reader inflates (67108864)"}},
	{"npz_size_lies.npz", func(t testing.TB) []byte {
		return npz(t, member{name: "attn.npy", data: npyF32(4, 4), method: zip.Deflate, usize: 4096})
	}, "attn", "", []string{"3968 bytes of data, shape [4 4] dtype <f4 needs 64"}},
	{"npz_inflates_past_declared.npz", func(t testing.TB) []byte {
		// The header and the declared size say [4 4] (192 bytes); the
		// deflated stream holds 1 MiB more, which is never inflated.
		data := append(npyF32(4, 4), make([]byte, 1<<20)...)
		return npz(t, member{name: "attn.npy", data: data, method: zip.Deflate, usize: 192})
	}, "attn", "", []string{`reading data after all 16 elements: npz: member "attn.npy" inflates past its declared 192 bytes, or is corrupt: zip: not a valid zip file`}},
	{"npz_stored_size_lies.npz", func(t testing.TB) []byte {
		return npz(t, member{name: "attn.npy", data: npyF32(4, 4), method: zip.Store, usize: 1 << 30})
	}, "attn", "", []string{"stored with compressed size 192 but uncompressed size 1073741824"}},
	{"npz_bad_crc.npz", func(t testing.TB) []byte {
		return npz(t, member{name: "attn.npy", data: npyF32(4, 4), method: zip.Deflate, badCRC: true})
	}, "attn", "", []string{"checksum error"}},
	{"npz_bzip2.npz", func(t testing.TB) []byte {
		return npz(t, member{name: "attn.npy", data: npyF32(4, 4), method: 12})
	}, "attn", "", []string{"unsupported compression method 12"}},
	{"npz_duplicate.npz", func(t testing.TB) []byte {
		return npz(t, member{name: "attn.npy", data: npyF32(4, 4)}, member{name: "attn.npy", data: npyF32(4, 4)})
	}, "attn", "", []string{`member "attn.npy" appears twice`}},
	{"npz_truncated.npz", func(t testing.TB) []byte {
		b := npz(t, member{name: "attn.npy", data: npyF32(4, 4)})
		return b[:len(b)-10]
	}, "", "", []string{"npz: not a readable zip file"}},
	// Neither.
	{"unknown.bin", func(testing.TB) []byte { return []byte("hello, world") }, "", "",
		[]string{"unknown format: want .safetensors, .npz or .npy"}},
}

func nanValue() float64 { return math.NaN() }

// TestBrokenFiles reads each committed broken file and checks the error. With
// -update it first rewrites the files; without, it checks they are current.
func TestBrokenFiles(t *testing.T) {
	dir := filepath.Join("testdata", "broken")
	seen := map[string]bool{}
	for _, c := range brokenCases {
		t.Run(c.file, func(t *testing.T) {
			if seen[c.file] {
				t.Fatalf("duplicate case %s", c.file)
			}
			seen[c.file] = true
			path := filepath.Join(dir, c.file)
			data := c.build(t)
			if *update {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			disk, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./core/sample/ -run TestBrokenFiles -update)", err)
			}
			if !bytes.Equal(disk, data) {
				t.Fatalf("%s is stale (run go test ./core/sample/ -run TestBrokenFiles -update)", path)
			}
			s, err := Read(path)
			if err == nil {
				t.Fatalf("Read(%s) = %+v, want an error", path, s)
			}
			if s != nil {
				t.Errorf("Read returned a sample with the error %v", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "sample: "+path+": ") {
				t.Errorf("error %q does not name the file %s", msg, path)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, strings.ReplaceAll(w, "size_mismatch.safetensors", path)) {
					t.Errorf("error %q\ndoes not contain %q", msg, w)
				}
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T is not an *Error", err)
			}
			if e.File != path || e.Tensor != c.tensor || e.Key != c.key {
				t.Errorf("Error{File: %q, Tensor: %q, Key: %q}, want {%q, %q, %q}", e.File, e.Tensor, e.Key, path, c.tensor, c.key)
			}
		})
	}
	if *update {
		// Remove files no case makes any more.
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if !seen[e.Name()] {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
	}
}

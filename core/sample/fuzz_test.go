package sample

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// addSeeds adds every committed test file whose name ends in ext.
func addSeeds(f *testing.F, ext string) {
	for _, dir := range []string{"broken", "interop", "golden"} {
		ents, err := os.ReadDir(filepath.Join("testdata", dir))
		if err != nil {
			f.Fatal(err)
		}
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ext) {
				b, err := os.ReadFile(filepath.Join("testdata", dir, e.Name()))
				if err != nil {
					f.Fatal(err)
				}
				f.Add(b)
			}
		}
	}
}

// fuzzDecode checks Decode's contract on arbitrary input: no panic; either an
// *Error naming the file and no sample, or a sample that passes Validate and
// survives a write and read back unchanged; DecodeReaderAt, which reads
// the data in chunks where Decode widens it in place, gives the same, and
// so does DecodeLazy.
func fuzzDecode(t *testing.T, name string, data []byte) {
	s, err := Decode(name, data)
	s2, err2 := DecodeReaderAt(name, bytes.NewReader(data), int64(len(data)))
	if fmt.Sprint(err) != fmt.Sprint(err2) || !reflect.DeepEqual(s, s2) {
		t.Fatalf("Decode and DecodeReaderAt differ: errors %v and %v", err, err2)
	}
	// DecodeLazy: the same error, or the same maxima before anything is
	// widened and the same sample once it all is.
	lz, errL := DecodeLazy(name, data)
	if fmt.Sprint(err) != fmt.Sprint(errL) {
		t.Fatalf("Decode and DecodeLazy differ: errors %v and %v", err, errL)
	}
	if err == nil {
		mx, _ := s.ValidateMaxima()
		if mxL, err := lz.ValidateMaxima(); err != nil || !reflect.DeepEqual(mx, mxL) {
			t.Fatalf("DecodeLazy's maxima %v (%v), want %v", mxL, err, mx)
		}
		lz.Widen()
		lz.lazy = nil
		if !reflect.DeepEqual(lz, s) {
			t.Fatal("Decode and DecodeLazy differ once widened")
		}
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) || e.File != name {
			t.Fatalf("error %v (%T) is not an *Error naming %s", err, err, name)
		}
		if s != nil {
			t.Fatalf("sample returned with error %v", err)
		}
		return
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("Decode returned a sample that fails Validate: %v", err)
	}
	var buf bytes.Buffer
	if err := WriteSafetensors(&buf, s, F32); err != nil {
		t.Fatalf("writing a decoded sample: %v", err)
	}
	back, err := Decode("back.safetensors", buf.Bytes())
	if err != nil {
		t.Fatalf("reading back a written sample: %v", err)
	}
	back.SourceDType = s.SourceDType
	if !reflect.DeepEqual(back, s) {
		t.Fatalf("write and read back changed the sample:\n got %+v\nwant %+v", back.Meta, s.Meta)
	}
}

func FuzzDecodeSafetensors(f *testing.F) {
	addSeeds(f, ".safetensors")
	f.Add(qkvST(`{"haeols.format":"1","prefix":"6","tokens":"[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\"]","needles":"[1]","needle_probes":"[0]","x":"y"}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, "fuzz.safetensors", data) })
}

func FuzzDecodeNPZ(f *testing.F) {
	addSeeds(f, ".npz")
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, "fuzz.npz", data) })
}

func FuzzDecodeNPY(f *testing.F) {
	addSeeds(f, ".npy")
	f.Add(npyF32(3, 4, 4))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzDecode(t, "fuzz.npy", data) })
}

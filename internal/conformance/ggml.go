//go:build linux && cgo

package conformance

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>

typedef size_t (*quantize_chunk_fn)(int type, const float *src, void *dst, int64_t start, int64_t nrows, int64_t n_per_row, const float *imatrix);
typedef size_t (*row_size_fn)(int type, int64_t ne);
typedef _Bool (*requires_imatrix_fn)(int type);

static void *haeols_dlopen(const char *path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }
static const char *haeols_dlerror(void) { return dlerror(); }
static void *haeols_dlsym(void *h, const char *name) { return dlsym(h, name); }
static size_t haeols_quantize(void *f, int type, const float *src, void *dst, int64_t nrows, int64_t n_per_row) {
	return ((quantize_chunk_fn)f)(type, src, dst, 0, nrows, n_per_row, NULL);
}
static size_t haeols_row_size(void *f, int type, int64_t ne) { return ((row_size_fn)f)(type, ne); }
static int haeols_requires_imatrix(void *f, int type) { return ((requires_imatrix_fn)f)(type) ? 1 : 0; }
typedef void (*to_float_fn)(const void *src, float *dst, int64_t k);
static void haeols_to_float(void *f, const void *src, float *dst, int64_t k) { ((to_float_fn)f)(src, dst, k); }
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/haeols/haeols/core/model"
	"github.com/haeols/haeols/core/model/quant"
)

// GGML is ggml's base library (libggml-base.so), opened with dlopen, for
// its quantizers.
type GGML struct {
	path                       string
	handle                     unsafe.Pointer
	quantize, rowSize, imatrix unsafe.Pointer
}

// OpenGGML opens the shared library at path and looks up
// ggml_quantize_chunk, ggml_row_size and ggml_quantize_requires_imatrix.
func OpenGGML(path string) (*GGML, error) {
	cp := C.CString(path)
	defer C.free(unsafe.Pointer(cp))
	h := C.haeols_dlopen(cp)
	if h == nil {
		return nil, fmt.Errorf("conformance: dlopen %s: %s", path, C.GoString(C.haeols_dlerror()))
	}
	g := &GGML{path: path, handle: h}
	for _, s := range []struct {
		name string
		p    *unsafe.Pointer
	}{{"ggml_quantize_chunk", &g.quantize}, {"ggml_row_size", &g.rowSize}, {"ggml_quantize_requires_imatrix", &g.imatrix}} {
		cn := C.CString(s.name)
		*s.p = C.haeols_dlsym(h, cn)
		C.free(unsafe.Pointer(cn))
		if *s.p == nil {
			return nil, fmt.Errorf("conformance: %s has no symbol %s", path, s.name)
		}
	}
	return g, nil
}

// Quantize returns the rows x cols matrix x (row-major) in ggml's blocks
// of type t, as ggml_quantize_chunk writes them (no importance matrix).
// The ggml_type numbers are quant.Type's.
func (g *GGML) Quantize(t quant.Type, rows, cols int, x []float32) ([]byte, error) {
	if rows*cols != len(x) || rows <= 0 || cols <= 0 {
		return nil, fmt.Errorf("conformance: quantize %s: %d x %d from %d values", t, rows, cols, len(x))
	}
	if C.haeols_requires_imatrix(g.imatrix, C.int(t)) != 0 {
		return nil, fmt.Errorf("conformance: quantize %s: ggml needs an importance matrix", t)
	}
	rb := int(C.haeols_row_size(g.rowSize, C.int(t), C.int64_t(cols)))
	want, err := t.RowBytes(cols)
	if err != nil {
		return nil, fmt.Errorf("conformance: quantize %s: %w", t, err)
	}
	if rb != want {
		return nil, fmt.Errorf("conformance: quantize %s: ggml's row of %d is %d bytes, haeols's %d", t, cols, rb, want)
	}
	dst := make([]byte, rows*rb)
	n := int(C.haeols_quantize(g.quantize, C.int(t), (*C.float)(unsafe.Pointer(&x[0])), unsafe.Pointer(&dst[0]), C.int64_t(rows), C.int64_t(cols)))
	if n != len(dst) {
		return nil, fmt.Errorf("conformance: quantize %s: ggml wrote %d bytes, want %d", t, n, len(dst))
	}
	return dst, nil
}

// Dequantize returns ggml's float32 values of the blocks src of type t
// holding n values: its dequantize_row_* function of the type, or
// ggml_fp16_to_fp32_row and ggml_bf16_to_fp32_row.
func (g *GGML) Dequantize(t quant.Type, src []byte, n int) ([]float32, error) {
	name := "dequantize_row_" + strings.ToLower(t.String()[:1]) + t.String()[1:]
	switch t {
	case quant.F16:
		name = "ggml_fp16_to_fp32_row"
	case quant.BF16:
		name = "ggml_bf16_to_fp32_row"
	}
	want, err := t.RowBytes(n)
	if err != nil || n <= 0 || len(src) != want {
		return nil, fmt.Errorf("conformance: dequantize %s: %d bytes for %d values (%v)", t, len(src), n, err)
	}
	cn := C.CString(name)
	f := C.haeols_dlsym(g.handle, cn)
	C.free(unsafe.Pointer(cn))
	if f == nil {
		return nil, fmt.Errorf("conformance: %s has no symbol %s", g.path, name)
	}
	dst := make([]float32, n)
	C.haeols_to_float(f, unsafe.Pointer(&src[0]), (*C.float)(unsafe.Pointer(&dst[0])), C.int64_t(n))
	return dst, nil
}

// Weight is Quantize as a Quantizer: ggml's blocks of type t.
func (g *GGML) Weight(t quant.Type, rows, cols int, x []float32) (*model.Weight, error) {
	b, err := g.Quantize(t, rows, cols, x)
	if err != nil {
		return nil, err
	}
	return &model.Weight{Type: t, Rows: rows, Cols: cols, Data: b}, nil
}

// Decoded is a Quantizer of F32 weights holding ggml's blocks of type t
// decoded by ggml: the fixture's values, without its blocks.
func (g *GGML) Decoded(t quant.Type, rows, cols int, x []float32) (*model.Weight, error) {
	b, err := g.Quantize(t, rows, cols, x)
	if err != nil {
		return nil, err
	}
	y, err := g.Dequantize(t, b, len(x))
	if err != nil {
		return nil, err
	}
	return model.NewWeight(quant.F32, rows, cols, y)
}

package sample

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Limits on how far a deflated .npz member may expand: at most
// MaxInflateRatio times its compressed size, or MinInflateLimit bytes if that
// is more. Real float data compresses far less; a zip bomb does not get past
// the check, which runs before any data is inflated.
const (
	MaxInflateRatio = 128
	MinInflateLimit = 64 << 20
)

// decodeNPZ decodes a zip of q.npy, k.npy, v.npy and/or attn.npy, of size
// bytes read from r.
func decodeNPZ(r io.ReaderAt, size int64) (*Sample, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return nil, fmt.Errorf("npz: not a readable zip file: %w", err)
	}
	var ts []*raw
	seen := map[string]bool{}
	for _, f := range zr.File {
		t, err := npzMember(f, size)
		if err != nil {
			return nil, err
		}
		if seen[t.name] {
			return nil, &Error{Tensor: t.name, Err: fmt.Errorf("npz: member %q appears twice", f.Name)}
		}
		seen[t.name] = true
		ts = append(ts, t)
	}
	if len(ts) == 0 {
		return nil, errors.New("npz: no arrays: want q.npy, k.npy, v.npy and/or attn.npy")
	}
	return assemble(ts, Meta{}, false)
}

// npzMember checks one member of an .npz file of size total and reads its
// .npy header.
func npzMember(f *zip.File, total int64) (*raw, error) {
	name := strings.TrimSuffix(f.Name, ".npy")
	fail := func(format string, a ...any) (*raw, error) {
		return nil, &Error{Tensor: name, Err: fmt.Errorf("npz: member %q: "+format, append([]any{f.Name}, a...)...)}
	}
	if !knownTensor(name) || name == f.Name {
		return fail("unexpected array (want q, k, v and/or attn; save with numpy.savez(f, q=q, k=k, v=v))")
	}
	csize, usize := f.CompressedSize64, f.UncompressedSize64
	if csize > uint64(total) {
		return fail("compressed size %d exceeds the %d-byte file", csize, total)
	}
	switch f.Method {
	case zip.Store:
		if usize != csize {
			return fail("stored with compressed size %d but uncompressed size %d", csize, usize)
		}
	case zip.Deflate:
		if lim := max(MinInflateLimit, MaxInflateRatio*csize); usize > lim {
			return fail("deflated from %d to %d bytes, more than this reader inflates (%d)", csize, usize, lim)
		}
	default:
		return fail("unsupported compression method %d (want stored or deflated)", f.Method)
	}
	rc, err := f.Open()
	if err != nil {
		return fail("%w", err)
	}
	h, err := readNPYHeader(rc, name, int64(usize))
	rc.Close()
	if err != nil {
		return nil, err
	}
	t, err := npyRaw(name, h, int64(usize))
	if err != nil {
		return nil, err
	}
	skip := int64(h.size)
	t.open = func() (io.ReadCloser, error) {
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("npz: member %q: %w", f.Name, err)
		}
		if _, err := io.CopyN(io.Discard, rc, skip); err != nil {
			rc.Close()
			return nil, fmt.Errorf("npz: member %q: %w", f.Name, err)
		}
		return &memberReader{rc, f.Name, usize}, nil
	}
	return t, nil
}

// memberReader says what archive/zip's bare ErrFormat means while reading a
// member's data: the member inflates past the size its header declares
// (where the zip reader stops it) or its data is corrupt.
type memberReader struct {
	io.ReadCloser
	name  string
	usize uint64
}

func (m *memberReader) Read(p []byte) (int, error) {
	n, err := m.ReadCloser.Read(p)
	if errors.Is(err, zip.ErrFormat) {
		err = fmt.Errorf("npz: member %q inflates past its declared %d bytes, or is corrupt: %w", m.name, m.usize, err)
	}
	return n, err
}

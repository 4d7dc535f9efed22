package model

import "math"

// ToHalfSplit reorders the rows of a q or k weight (or bias) w of heads
// heads of headDim rows each from the interleaved RoPE order (rows 2i and
// 2i+1 of a head rotate together) to the half-split order (rows i and
// i + headDim/2): half-split row j*headDim/2 + i is interleaved row
// 2i + j. Rows move whole, so quantized rows stay valid.
func ToHalfSplit(w *Weight, heads, headDim int) *Weight {
	return permuteRows(w, heads, headDim, func(i, j int) (dst, src int) { return j*headDim/2 + i, 2*i + j })
}

// ToInterleaved is the inverse of ToHalfSplit: interleaved row 2i + j is
// half-split row j*headDim/2 + i (llama.cpp's converter applies it to
// Hugging Face q and k weights when it writes GGUF llama files).
func ToInterleaved(w *Weight, heads, headDim int) *Weight {
	return permuteRows(w, heads, headDim, func(i, j int) (dst, src int) { return 2*i + j, j*headDim/2 + i })
}

// permuteRows moves rows (or, for a one-row bias, elements) within each
// head: for i < headDim/2 and j < 2, row dst of the result is row src of
// w, as move gives them.
func permuteRows(w *Weight, heads, headDim int, move func(i, j int) (int, int)) *Weight {
	out := &Weight{Type: w.Type, Rows: w.Rows, Cols: w.Cols, Data: make([]byte, len(w.Data))}
	unit, n := w.RowBytes(), w.Rows // a matrix: move rows
	if w.Rows == 1 {
		unit, n = len(w.Data)/w.Cols, w.Cols // a bias vector of a float type: move elements
	}
	if n != heads*headDim {
		panic("model: permuteRows: size does not match heads*headDim")
	}
	for h := 0; h < heads; h++ {
		for i := 0; i < headDim/2; i++ {
			for j := 0; j < 2; j++ {
				d, s := move(i, j)
				d, s = (h*headDim+d)*unit, (h*headDim+s)*unit
				copy(out.Data[d:d+unit], w.Data[s:s+unit])
			}
		}
	}
	return out
}

// Llama3Factors are the RoPE frequency divisors of Llama 3.1's
// "llama3" rope scaling for a head of headDim and base theta: pair i of
// wavelength L = 2*pi*theta^(2i/headDim) is divided by factor when
// L > original/lowFreq, kept when L < original/highFreq, and in between
// divided by 1 / ((1-s)/factor + s) with s = (original/L - lowFreq) /
// (highFreq - lowFreq) — the frequencies transformers computes and the
// rope_freqs tensor llama.cpp's converter writes.
func Llama3Factors(headDim int, theta, factor, lowFreq, highFreq float64, original int) []float32 {
	out := make([]float32, headDim/2)
	lowWave, highWave := float64(original)/lowFreq, float64(original)/highFreq
	for i := range out {
		freq := 1 / math.Pow(theta, float64(2*i)/float64(headDim))
		wave := 2 * math.Pi / freq
		switch {
		case wave < highWave:
			out[i] = 1
		case wave > lowWave:
			out[i] = float32(factor)
		default:
			s := (float64(original)/wave - lowFreq) / (highFreq - lowFreq)
			out[i] = float32(1 / ((1-s)/factor + s))
		}
	}
	return out
}

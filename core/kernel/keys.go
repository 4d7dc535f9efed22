package kernel

// KeyBlock is the number of keys of one block of a packed key array
// (PackKey): a block holds KeyBlock keys of d elements transposed, element
// c of its key l at 8*c+l, so that a vector register of 4 or 8 lanes loads
// one element of 4 or 8 keys at once.
const KeyBlock = 8

// PackedLen is the length of a packed array of n keys of d elements: whole
// blocks of KeyBlock keys.
func PackedLen(n, d int) int { return (n + KeyBlock - 1) / KeyBlock * KeyBlock * d }

// PackKey stores key (d = len(key) elements) as key t of the packed array
// kt: element c at kt[(t/KeyBlock)*KeyBlock*d + KeyBlock*c + t%KeyBlock].
func PackKey(kt []float32, t int, key []float32) {
	d := len(key)
	base := (t/KeyBlock)*KeyBlock*d + t%KeyBlock
	kt = kt[base : base+KeyBlock*(d-1)+1]
	for c, v := range key {
		kt[KeyBlock*c] = v
	}
}

// KeyDots sets dst[i*ldd+t] to the dot product of query row i of q (m rows
// of d elements) and key t of the packed array kt (PackKey), for t < n: the
// products q[c]*k[c] rounded and added in the order of c, which is Dot's
// result (the order of an attention's logit in llama2.c's run.c). The
// vector paths run one key per lane, with the same bits.
func KeyDots(dst []float32, ldd int, q []float32, m int, kt []float32, n, d int) {
	if m <= 0 || n <= 0 {
		return
	}
	if ldd < n {
		panic("kernel: KeyDots: row stride shorter than a row")
	}
	dst, q, kt = dst[:(m-1)*ldd+n], q[:m*d], kt[:PackedLen(n, d)]
	if vecLanes > 0 && d > 0 {
		keyDotsVec(dst, ldd, q, m, kt, n, d)
		return
	}
	keyDotsGo(dst, ldd, q, m, kt, n, d)
}

// keyDotsGo is KeyDots in portable Go.
func keyDotsGo(dst []float32, ldd int, q []float32, m int, kt []float32, n, d int) {
	for i := 0; i < m; i++ {
		qi := q[i*d : (i+1)*d]
		for t := 0; t < n; t++ {
			blk := kt[(t/KeyBlock)*KeyBlock*d+t%KeyBlock:]
			var s float32
			for c, x := range qi {
				s += float32(x * blk[KeyBlock*c])
			}
			dst[i*ldd+t] = s
		}
	}
}

// keyDotsVec is KeyDots on the archsimd kernels, block by block; a last
// partial block is computed whole into a scratch row (its missing keys are
// whatever the array holds) and only its first keys are kept.
func keyDotsVec(dst []float32, ldd int, q []float32, m int, kt []float32, n, d int) {
	var tail [4 * KeyBlock]float32
	full := n / KeyBlock
	for i := 0; i < m; i += 4 {
		rows := min(4, m-i)
		qi := q[i*d : (i+rows)*d]
		for b := 0; b < full; b++ {
			keyBlock(dst[i*ldd+b*KeyBlock:], ldd, qi, rows, kt[b*KeyBlock*d:(b+1)*KeyBlock*d], d)
		}
		if r := n - full*KeyBlock; r > 0 {
			keyBlock(tail[:], KeyBlock, qi, rows, kt[full*KeyBlock*d:], d)
			for j := 0; j < rows; j++ {
				copy(dst[(i+j)*ldd+full*KeyBlock:(i+j)*ldd+n], tail[j*KeyBlock:j*KeyBlock+r])
			}
		}
	}
}

// keyBlock sets dst[i*ldd+l] (l < KeyBlock) to the dot products of the
// rows <= 4 query rows of q with the KeyBlock keys of the block kt, on the
// widest archsimd kernel: the 8-key logits kernel with 8 lanes, or for 4
// rows where it is assembly (wasm; a scale of 1 leaves every product's
// sum as it is).
func keyBlock(dst []float32, ldd int, q []float32, rows int, kt []float32, d int) {
	if vecLanes == 8 || wideKeys && rows == 4 {
		logitsT8(dst, ldd, q, rows, kt, d, 1)
		return
	}
	keyBlockT4(dst, ldd, q, rows, kt, d)
}

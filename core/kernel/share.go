package kernel

// The elementwise float64 arithmetic of HAE-OLS's exact share (the exact
// tokens' part of the calibration and probe attention, kept as terms:
// core.exactRows): the bin targets' weighted values and the outputs the
// metrics read from the share. Each element gets the same rounded
// operations on every path (four lanes with AVX2, scalars elsewhere).

// ShareTargets sets y[k] = f * (tot[k] - (p[k] + float64(sign*float64(x[k]))))
// for k < len(y).
func ShareTargets(y []float64, f float64, tot, p []float64, sign float64, x []float32) {
	n := len(y)
	tot, p, x = tot[:n], p[:n], x[:n]
	k := 0
	if vecLanes == 8 && n >= 4 {
		k = shareTargetsT4(y, f, tot, p, sign, x)
	}
	for ; k < n; k++ {
		y[k] = f * (tot[k] - (p[k] + float64(sign*float64(x[k]))))
	}
}

// ShareOut sets out[e] = float32(num / den) for e < len(out), with
//
//	ey  = nonY[e] + (by[e] + float64(sign*float64(y[e])))
//	num = float64(f*ey) + float64(sv[e])
//
// plus float64(g*float64(acc[e])) when acc is not nil (added last).
func ShareOut(out []float32, nonY, by []float64, sign float64, y []float32, f float64, sv []float32, g float64, acc []float32, den float64) {
	n := len(out)
	nonY, by, y, sv = nonY[:n], by[:n], y[:n], sv[:n]
	if acc != nil {
		acc = acc[:n]
	}
	e := 0
	if vecLanes == 8 && n >= 4 {
		e = shareOutT4(out, nonY, by, sign, y, f, sv, g, acc, den)
	}
	for ; e < n; e++ {
		ey := nonY[e] + (by[e] + float64(sign*float64(y[e])))
		num := float64(f*ey) + float64(sv[e])
		if acc != nil {
			num += float64(g * float64(acc[e]))
		}
		out[e] = float32(num / den)
	}
}

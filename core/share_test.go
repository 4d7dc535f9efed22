package core

// exactSums is an exact share (exactShare) summed out row by row, the
// form TestBinTargets checks: z[i] and y[i*D+c] are exactRows.z(i) and
// exactRows.y(i*D+c).
type exactSums struct{ cal, probe *exactSumRows }

type exactSumRows struct{ z, y []float64 }

// binTargets is Group.targets with the exact share summed out.
func (g *Group) binTargets(sc *scratch, order *binOrder, from int, withY bool) (z, y []float64, ex *exactSums) {
	z, y, sh := g.targets(sc, order, from, withY)
	if sh == nil {
		return z, y, nil
	}
	ex = &exactSums{cal: sh.cal.sums()}
	if sh.probe != nil {
		ex.probe = sh.probe.sums()
	}
	return z, y, ex
}

func (e *exactRows) sums() *exactSumRows {
	r := &exactSumRows{z: make([]float64, len(e.z32)), y: make([]float64, len(e.y32))}
	for i := range r.z {
		r.z[i] = e.z(i)
	}
	for k := range r.y {
		r.y[k] = e.y(k)
	}
	return r
}

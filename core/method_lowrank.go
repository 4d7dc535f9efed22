package core

import "github.com/haeols/haeols/core/solve"

func init() { Register(lowrank{}) }

// lowrank is a Palu/xKV-like baseline: the whole prefix's K and V each stored
// as a truncated SVD of rank k, the largest with 2k(n+d) <= T*2d numbers. No
// token is evicted; every token is approximate. When the budget holds the
// dense cache (T = n) it is kept exact.
type lowrank struct{}

func (lowrank) Name() string { return "lowrank" }
func (lowrank) Describe() string {
	return "whole-prefix truncated SVD of K and V at the largest rank that fits (Palu/xKV-like)"
}

func (lowrank) Compress(g *Group, p Params) (*Cache, error) {
	if err := g.needKV(); err != nil {
		return nil, err
	}
	b, err := NewBudget(g.N, g.D, p.Ratio, 0, 0)
	if err != nil {
		return nil, err
	}
	c := newCache("lowrank", b)
	if b.Slots >= g.N {
		c.keepExact(span(0, g.N), Anchor)
		c.finishExact()
		return c, nil
	}
	k := min(b.Slots*2*g.D/(2*(g.N+g.D)), g.D, g.N)
	c.Stages.LowRank = k
	if k == 0 {
		c.finishExact()
		return c, nil
	}
	sk, sv, err := factors(g)
	if err != nil {
		return nil, err
	}
	rk, rv := make([]float64, g.N*g.D), make([]float64, g.N*g.D)
	sk.Reconstruct(k, rk)
	sv.Reconstruct(k, rv)
	c.C = g.N
	c.Keys, c.Values = make([]float32, g.N*g.D), make([]float32, g.N*g.D)
	to32(c.Keys, rk)
	to32(c.Values, rv)
	for i := range c.Class {
		c.Class[i] = Approx
	}
	c.Stages.RankK, c.Stages.RankV = k, k
	c.Stages.EnergyK, c.Stages.EnergyV = energy(sk.S, k), energy(sv.S, k)
	c.Stages.SummaryBits = int64(2*k*(g.N+g.D)) * BitsPerNumber
	c.finishExact()
	return c, nil
}

// energy is the share of the squared singular values kept by the first k.
func energy(s []float64, k int) float64 {
	var kept, all float64
	for i, x := range s {
		all += float64(x * x)
		if i < k {
			kept += float64(x * x)
		}
	}
	if all == 0 {
		return 1
	}
	return kept / all
}

// svds are the thin SVDs of a group's prefix keys and values, lowrank's
// state in the group (Group.Memo).
type svds struct {
	k, v *solve.SVD
	err  error
}

// factors returns the group's thin SVDs of the prefix keys and values,
// computed once.
func factors(g *Group) (*solve.SVD, *solve.SVD, error) {
	s := g.Memo("lowrank", func() any {
		var s svds
		s.k, s.err = solve.Decompose(to64(g.K), g.N, g.D)
		if s.err == nil {
			s.v, s.err = solve.Decompose(to64(g.V), g.N, g.D)
		}
		return &s
	}).(*svds)
	return s.k, s.v, s.err
}

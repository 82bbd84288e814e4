package main

import (
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// modelEval evaluates policies exactly under a known simulation model.
type modelEval struct {
	*eval.Model
	path string
}

func loadModel(path string) (*modelEval, error) {
	m, err := sim.ReadModelFile(path)
	if err != nil {
		return nil, badInputf("--model %s: %v", path, err)
	}
	return &modelEval{Model: eval.NewModel(m), path: path}, nil
}

func (me *modelEval) check(p *solve.Policy) error {
	if err := me.Check(p); err != nil {
		return badInputf("--model %s: %v", me.path, err)
	}
	return nil
}

func (me *modelEval) evaluate(p *solve.Policy) (eval.ExactValues, error) {
	if err := me.check(p); err != nil {
		return eval.ExactValues{}, err
	}
	return me.Exact(p)
}

package eval

import (
	"math"
	"slices"
	"sync/atomic"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// The behaviour policy's propensities, estimated per (site, step) from
// that step's rows of the site alone (see the package documentation,
// "Estimators that do not trust the model").

// CellSmoothing is the alpha of the add-alpha smoothing of a cell's
// action frequencies: mu(a | cell) = (n_{cell,a} + alpha) / (n_cell +
// alpha m) over the m actions the site took at the step. 1/2 is the
// Jeffreys (Krichevsky-Trofimov) prior of a multinomial: a cell seen once
// gives its action 1.5/(1 + m/2), not 1, so that one visit does not make
// the behaviour look deterministic, and an action of the site's formulary
// that the cell never saw keeps a small propensity.
const CellSmoothing = 0.5

// LogitRidge is the ridge penalty (on standardised slopes; intercepts are
// not penalised) of the multinomial logistic regression of the action on
// the state: it keeps the fit finite when the site's actions separate
// perfectly along a state column, and is negligible beside the rows of a
// typical (site, step).
const LogitRidge = 1.0

// LogitFitRows bounds the rows a (site, step)'s logistic regression is
// fitted on: above it, rows at a regular stride (every ceil(n/LogitFitRows)
// th, in the step's row order), so that the fit is deterministic and its
// cost bounded; its predictions are used at every row.
const LogitFitRows = 4096

// logitIters and logitTol bound Newton's method: at most logitIters
// iterations, stopping when no coefficient moves by more than logitTol.
const (
	logitIters = 50
	logitTol   = 1e-10
)

// behaviour is one (site, step)'s estimated behaviour policy.
type behaviour struct {
	// actions are the site's formulary at the step: the actions its rows
	// took, ascending.
	actions []int32
	// Cells (indicator maps): freq[c*m+x] is the smoothed probability of
	// actions[x] in cell c (cells indexes behaviourCell's numbering through
	// cellIndex).
	cellIndex map[int]int
	freq      []float64
	// Logistic regression: coef[x*(p+1)+j] for action x (x = 0 is the
	// reference, all zero) on the standardised state column j (j = p: the
	// intercept); mean and scale standardise the state.
	coef, mean, scale []float64
	// fit, when set, is the logistic regression's fitted problem, kept
	// for refit (which takes it) when the fit was asked to keep it.
	fit atomic.Pointer[logitFit]
}

// behaviourCell returns the cell of a state under an indicator map m (tabular,
// indicator and binned maps: their features are indicators of cells).
func behaviourCell(m *features.Map, state []float64) int {
	if m.Kind == features.Binned {
		return m.Cell(state)
	}
	return int(state[0])
}

// fitBehaviour estimates the behaviour at rows lo..hi of step s (one
// site's rows of one step): cell frequencies for indicator maps, a
// multinomial logistic regression on the state otherwise. Row weights
// count as multiplicities.
func fitBehaviour(m *features.Map, s *traj.Step, W, lo, hi int) *behaviour {
	return fitBehaviourKeep(m, s, W, lo, hi, false)
}

// fitBehaviourKeep is fitBehaviour; with keep, a logistic regression
// keeps its fitted problem for the first refit, which reads the same rows
// at the same coefficients.
func fitBehaviourKeep(m *features.Map, s *traj.Step, W, lo, hi int, keep bool) *behaviour {
	b := &behaviour{}
	for j := lo; j < hi; j++ {
		a := s.Action[j]
		if i, ok := slices.BinarySearch(b.actions, a); !ok {
			b.actions = slices.Insert(b.actions, i, a)
		}
	}
	if len(b.actions) <= 1 {
		return b
	}
	if indicatorMap(m) {
		b.fitCells(m, s, W, lo, hi)
	} else {
		b.fitLogit(s, W, lo, hi, keep)
	}
	return b
}

// fitCells sets the cells' smoothed action frequencies.
func (b *behaviour) fitCells(m *features.Map, s *traj.Step, W, lo, hi int) {
	M := len(b.actions)
	b.cellIndex = map[int]int{}
	var counts []float64
	for j := lo; j < hi; j++ {
		c := behaviourCell(m, s.State[j*W:(j+1)*W])
		ci, ok := b.cellIndex[c]
		if !ok {
			ci = len(b.cellIndex)
			b.cellIndex[c] = ci
			counts = append(counts, make([]float64, M)...)
		}
		x, _ := slices.BinarySearch(b.actions, s.Action[j])
		counts[ci*M+x] += weight(s, j)
	}
	smoothCells(counts, M)
	b.freq = counts
}

// smoothCells turns cells' weighted action counts (freq[c*M+x] for action
// x of M in cell c) into their smoothed frequencies, in place.
func smoothCells(freq []float64, M int) {
	for ci := 0; ci < len(freq)/M; ci++ {
		row := freq[ci*M : (ci+1)*M]
		n := 0.0
		for _, v := range row {
			n += v
		}
		for x := range row {
			row[x] = (row[x] + CellSmoothing) / (n + CellSmoothing*float64(M))
		}
	}
}

// fitLogit fits the multinomial logistic regression of the action on the
// standardised state by Newton's method with the ridge [LogitRidge].
// With keep, the fitted problem is kept in b.fit.
func (b *behaviour) fitLogit(s *traj.Step, W, lo, hi int, keep bool) {
	rows := logitRows(lo, hi)
	b.fitScale(s, W, rows)
	p := b.logitProblem(s, W, rows)
	theta := p.newton(p.start())
	b.coef = make([]float64, p.M*p.P)
	copy(b.coef[p.P:], theta)
	if keep {
		b.fit.Store(p)
	}
}

// logitRows returns the rows of lo..hi-1 the logistic regression is
// fitted on: all, or at most [LogitFitRows] at a regular stride.
func logitRows(lo, hi int) []int {
	stride := max(1, (hi-lo+LogitFitRows-1)/LogitFitRows)
	var rows []int
	for j := lo; j < hi; j += stride {
		rows = append(rows, j)
	}
	return rows
}

// fitScale sets the weighted mean and standard deviation of each state
// column over the fitted rows (a constant column gets scale 1).
func (b *behaviour) fitScale(s *traj.Step, W int, rows []int) {
	b.mean, b.scale = make([]float64, W), make([]float64, W)
	n := 0.0
	for _, j := range rows {
		w := weight(s, j)
		n += w
		for c := 0; c < W; c++ {
			b.mean[c] += w * s.State[j*W+c]
		}
	}
	for c := range b.mean {
		b.mean[c] /= n
	}
	for _, j := range rows {
		w := weight(s, j)
		for c := 0; c < W; c++ {
			d := s.State[j*W+c] - b.mean[c]
			b.scale[c] += w * d * d
		}
	}
	for c := range b.scale {
		b.scale[c] = math.Sqrt(b.scale[c] / n)
		if b.scale[c] == 0 {
			b.scale[c] = 1
		}
	}
}

// logitFit is the penalised likelihood fitLogit maximises: the fitted
// rows, standardised, with their classes and weights. Coefficients th
// hold the M-1 non-reference classes' P = W+1 values each (the last one
// the intercept).
type logitFit struct {
	b       *behaviour
	M, P, W int
	// x[r*P..] holds row r's standardised state and 1; y its class, wt its
	// weight.
	x  []float64
	y  []int
	wt []float64
	// rowProbs[r*M..] holds row r's class probabilities at the
	// coefficients probsAt (valid when probsSet), as the last objective
	// or derivatives call computed them: Newton's method asks for the
	// derivatives at the coefficients its line search last valued.
	rowProbs []float64
	probsAt  []uint64
	probsSet bool
	// acc holds derivatives' Hessian sums, block by block (see
	// derivatives).
	acc []float64
}

// logitProblem standardises the fitted rows with b's mean and scale.
func (b *behaviour) logitProblem(s *traj.Step, W int, rows []int) *logitFit {
	M, P := len(b.actions), W+1
	p := &logitFit{b: b, M: M, P: P, W: W,
		x: make([]float64, len(rows)*P), y: make([]int, len(rows)), wt: make([]float64, len(rows)),
		rowProbs: make([]float64, len(rows)*M)}
	for r, j := range rows {
		b.standardise(p.x[r*P:(r+1)*P], s.State[j*W:(j+1)*W])
		p.y[r], _ = slices.BinarySearch(b.actions, s.Action[j])
		p.wt[r] = weight(s, j)
	}
	return p
}

// start returns the starting coefficients: the classes' log frequencies
// relative to the reference class as intercepts, all slopes zero.
func (p *logitFit) start() []float64 {
	theta := make([]float64, (p.M-1)*p.P)
	freq := make([]float64, p.M)
	for r := range p.y {
		freq[p.y[r]] += p.wt[r]
	}
	for xc := 1; xc < p.M; xc++ {
		theta[(xc-1)*p.P+p.W] = math.Log(freq[xc] / freq[0])
	}
	return theta
}

// objective returns the negative weighted log likelihood at th plus the
// ridge on the slopes.
func (p *logitFit) objective(th []float64) float64 {
	pr := p.probsOf(th)
	f := 0.0
	for r, y := range p.y {
		f -= p.wt[r] * math.Log(pr[r*p.M+y])
	}
	for xc := 1; xc < p.M; xc++ {
		for c := 0; c < p.W; c++ {
			v := th[(xc-1)*p.P+c]
			f += LogitRidge / 2 * v * v
		}
	}
	return f
}

// probsOf returns the fitted rows' class probabilities at th, row r's at
// [r*M, (r+1)*M), computed unless they were last computed at the same
// coefficients.
func (p *logitFit) probsOf(th []float64) []float64 {
	if p.probsSet && len(p.probsAt) == len(th) {
		same := true
		for i, v := range th {
			if math.Float64bits(v) != p.probsAt[i] {
				same = false
				break
			}
		}
		if same {
			return p.rowProbs
		}
	}
	M, P := p.M, p.P
	for r := range p.y {
		p.b.probs(p.rowProbs[r*M:(r+1)*M], p.x[r*P:(r+1)*P], th)
	}
	p.probsAt = p.probsAt[:0]
	for _, v := range th {
		p.probsAt = append(p.probsAt, math.Float64bits(v))
	}
	p.probsSet = true
	return p.rowProbs
}

// derivatives writes the objective's gradient at theta to grad and its
// Hessian's upper triangle, row-major, to hess. The Hessian's sums are
// formed block by block in acc, for the class pairs c1 <= c2 in order:
// the upper triangle of a diagonal block (c1 = c2), all P x P entries of
// the others, row-major; each entry sums its rows' terms in row order.
func (p *logitFit) derivatives(grad, hess, theta []float64) {
	M, P, nd := p.M, p.P, len(theta)
	diag, off := P*(P+1)/2, P*P
	n := (M-1)*diag + (M-1)*(M-2)/2*off
	p.acc = slices.Grow(p.acc[:0], n)[:n]
	acc := p.acc
	clear(grad)
	clear(acc)
	probs := p.probsOf(theta)
	for r, y := range p.y {
		xr := p.x[r*P : (r+1)*P]
		prob := probs[r*M : (r+1)*M]
		w := p.wt[r]
		a := 0
		for c1 := 1; c1 < M; c1++ {
			g := prob[c1]
			if y == c1 {
				g -= 1
			}
			gr := grad[(c1-1)*P : c1*P]
			gr = gr[:len(xr)]
			for i, v := range xr {
				gr[i] += w * g * v
			}
			for c2 := c1; c2 < M; c2++ {
				h := -prob[c1] * prob[c2]
				if c1 == c2 {
					h += prob[c1]
				}
				h *= w
				if c1 == c2 {
					hessDiagBlock(acc[a:a+diag], xr, h)
					a += diag
				} else {
					hessBlock(acc[a:a+off], xr, h)
					a += off
				}
			}
		}
	}
	clear(hess)
	a := 0
	for c1 := 1; c1 < M; c1++ {
		for c2 := c1; c2 < M; c2++ {
			for i := 0; i < P; i++ {
				k0 := 0
				if c1 == c2 {
					k0 = i
				}
				row := hess[((c1-1)*P+i)*nd+(c2-1)*P+k0 : ((c1-1)*P+i)*nd+c2*P]
				a += copy(row, acc[a:a+len(row)])
			}
		}
	}
	for xc := 1; xc < M; xc++ {
		for c := 0; c < p.W; c++ {
			i := (xc-1)*P + c
			grad[i] += LogitRidge * theta[i]
			hess[i*nd+i] += LogitRidge
		}
		// A tiny ridge on the intercepts keeps the Hessian positive
		// definite when a class's probability underflows.
		i := (xc-1)*P + p.W
		hess[i*nd+i] += 1e-12
	}
}

// hessDiagBlock adds one row's terms h x_i x_k (k >= i) of a diagonal
// block to blk, row-major.
func hessDiagBlock(blk, x []float64, h float64) {
	e := 0
	for i, xi := range x {
		hx := h * xi
		for _, xk := range x[i:] {
			blk[e] += hx * xk
			e++
		}
	}
}

// hessBlock adds one row's terms h x_i x_k of an off-diagonal block to
// blk, row-major.
func hessBlock(blk, x []float64, h float64) {
	P := len(x)
	for i, xi := range x {
		hx := h * xi
		row := blk[i*P : (i+1)*P]
		for k, xk := range x {
			row[k] += hx * xk
		}
	}
}

// newton minimises the objective from theta by Newton's method, each step
// halved until the objective does not increase, and returns theta. It
// stops after logitIters iterations, when no coefficient moves by more
// than logitTol, or when a step cannot be taken.
func (p *logitFit) newton(theta []float64) []float64 {
	nd := len(theta)
	grad, step, trial := make([]float64, nd), make([]float64, nd), make([]float64, nd)
	hess := make([]float64, nd*nd)
	var chol mat.Cholesky
	f := p.objective(theta)
	for it := 0; it < logitIters; it++ {
		p.derivatives(grad, hess, theta)
		if !chol.Factorize(mat.NewSymDense(nd, hess)) {
			break
		}
		sv := mat.NewVecDense(nd, step)
		if err := chol.SolveVecTo(sv, mat.NewVecDense(nd, grad)); err != nil {
			break
		}
		t := 1.0
		var ft float64
		for half := 0; half < 30; half++ {
			for i := range trial {
				trial[i] = theta[i] - t*step[i]
			}
			if ft = p.objective(trial); ft <= f {
				break
			}
			t /= 2
		}
		if ft > f {
			break
		}
		moved := 0.0
		for i := range theta {
			moved = max(moved, math.Abs(trial[i]-theta[i]))
		}
		copy(theta, trial)
		f = ft
		if moved <= logitTol {
			break
		}
	}
	return theta
}

// standardise writes the standardised state and the intercept's 1 to dst.
func (b *behaviour) standardise(dst, state []float64) {
	for c, v := range state {
		dst[c] = (v - b.mean[c]) / b.scale[c]
	}
	dst[len(state)] = 1
}

// probs writes the softmax probabilities of the M classes at the
// standardised row x with non-reference coefficients th to dst.
func (b *behaviour) probs(dst, x, th []float64) {
	P := len(x)
	top := 0.0
	dst[0] = 0
	for xc := 1; xc < len(dst); xc++ {
		z := 0.0
		for i, v := range x {
			z += th[(xc-1)*P+i] * v
		}
		dst[xc] = z
		top = max(top, z)
	}
	sum := 0.0
	for xc := range dst {
		dst[xc] = math.Exp(dst[xc] - top)
		sum += dst[xc]
	}
	for xc := range dst {
		dst[xc] /= sum
	}
}

// classProb returns the logistic regression's probability of class x at
// the standardised row xs, as probs computes it (dst is its scratch, of
// room for the M classes).
func (b *behaviour) classProb(dst, xs []float64, x int) float64 {
	b.probs(dst, xs, b.coef[len(xs):])
	return dst[x]
}

// prob returns the estimated propensity of action a at state: 0 for an
// action off the formulary, 1 for the only action of a one-action
// formulary. scratch must have room for W+1+len(actions) values.
func (b *behaviour) prob(m *features.Map, state []float64, a int32, scratch []float64) float64 {
	x, ok := slices.BinarySearch(b.actions, a)
	if !ok {
		return 0
	}
	M := len(b.actions)
	if M == 1 {
		return 1
	}
	if b.freq != nil {
		ci, seen := b.cellIndex[behaviourCell(m, state)]
		if !seen {
			// A cell the site never visited at the step: its
			// smoothed frequencies are uniform over the formulary.
			return 1 / float64(M)
		}
		return b.freq[ci*M+x]
	}
	P := len(state) + 1
	xs, pr := scratch[:P], scratch[P:P+M]
	b.standardise(xs, state)
	b.probs(pr, xs, b.coef[P:])
	return pr[x]
}

// inFormulary reports whether the site took action a at the step.
func (b *behaviour) inFormulary(a int32) bool {
	_, ok := slices.BinarySearch(b.actions, a)
	return ok
}

// refit returns the behaviour b (fitted at rows lo..hi-1 of step s)
// refitted to each of the B bootstrap replicates whose Poisson counts are
// counts (counts[i*B+r] is trajectory i's count in replicate r), so that
// the intervals of PDWIS and WDR carry the variability of the
// propensities' fit:
//
//   - cells: each replicate's smoothed frequencies, from its own counts
//     (exact);
//   - logistic regression: one Newton step from b's coefficients theta
//     with b's Hessian H, theta_r = theta - H^{-1} g_r, g_r the gradient
//     of replicate r's penalised objective at theta (its rows counted
//     their trajectory's count times) on b's rows (the first-order
//     expansion of the replicate's fit around the data's);
//
// A replicate with a formulary of one action, or whose Hessian cannot be
// factorised, keeps b.
func (b *behaviour) refit(m *features.Map, s *traj.Step, W, lo, hi int, counts []uint8, B int) []*behaviour {
	out := make([]*behaviour, B)
	for r := range out {
		out[r] = b
	}
	switch {
	case len(b.actions) <= 1:
	case b.freq != nil:
		b.refitCells(out, m, s, W, lo, hi, counts)
	default:
		b.refitLogit(out, s, W, lo, hi, counts)
	}
	return out
}

// replicateCounts returns the counts of row j of s in the B replicates
// whose Poisson counts are counts: its trajectory's, nil for a row
// without a trajectory (counted once in every replicate).
func replicateCounts(s *traj.Step, counts []uint8, B, j int) []uint8 {
	i := int(s.Traj[j])
	if i < 0 {
		return nil
	}
	return counts[i*B : (i+1)*B]
}

// rowCount returns a row's count in replicate r given its replicate
// counts n (replicateCounts).
func rowCount(n []uint8, r int) float64 {
	if n == nil {
		return 1
	}
	return float64(n[r])
}

// refitCells sets out[r] to b's cells with replicate r's smoothed action
// frequencies, the rows lo..hi-1 counted as their trajectories in
// counts.
func (b *behaviour) refitCells(out []*behaviour, m *features.Map, s *traj.Step, W, lo, hi int, counts []uint8) {
	M, n, B := len(b.actions), len(b.freq), len(out)
	freq := make([]float64, B*n)
	for j := lo; j < hi; j++ {
		ci := b.cellIndex[behaviourCell(m, s.State[j*W:(j+1)*W])]
		x, _ := slices.BinarySearch(b.actions, s.Action[j])
		wj := weight(s, j)
		nj := replicateCounts(s, counts, B, j)
		for r := range B {
			freq[r*n+ci*M+x] += rowCount(nj, r) * wj
		}
	}
	for r := range B {
		f := freq[r*n : (r+1)*n]
		smoothCells(f, M)
		out[r] = &behaviour{actions: b.actions, cellIndex: b.cellIndex, freq: f}
	}
}

// refitLogit sets out[r] to b's logistic regression moved by one Newton
// step toward replicate r's fit (see refit), unless b's Hessian cannot be
// factorised or the step cannot be solved for.
func (b *behaviour) refitLogit(out []*behaviour, s *traj.Step, W, lo, hi int, counts []uint8) {
	rows := logitRows(lo, hi)
	p := b.fit.Swap(nil)
	if p == nil {
		p = b.logitProblem(s, W, rows)
	}
	P := p.P
	theta := b.coef[P:]
	nd := len(theta)
	grad, hess := make([]float64, nd), make([]float64, nd*nd)
	p.derivatives(grad, hess, theta)
	var chol mat.Cholesky
	if !chol.Factorize(mat.NewSymDense(nd, hess)) {
		return
	}
	g := p.replicateGradients(theta, s, rows, counts, len(out))
	step := make([]float64, nd)
	for r := range out {
		if err := chol.SolveVecTo(mat.NewVecDense(nd, step), mat.NewVecDense(nd, g[r*nd:(r+1)*nd])); err != nil {
			continue
		}
		coef := make([]float64, p.M*P)
		for i := range theta {
			coef[P+i] = theta[i] - step[i]
		}
		out[r] = &behaviour{actions: b.actions, mean: b.mean, scale: b.scale, coef: coef}
	}
}

// replicateGradients returns the gradients at theta of B replicates'
// penalised objectives, replicate r's at [r*nd, (r+1)*nd): the fitted
// rows' scores, each row (rows[ri] of step s) counted as its trajectory
// in counts, then the ridge.
func (p *logitFit) replicateGradients(theta []float64, s *traj.Step, rows []int, counts []uint8, B int) []float64 {
	P, nd := p.P, len(theta)
	g := make([]float64, B*nd)
	score := make([]float64, nd)
	probs := p.probsOf(theta)
	for ri, j := range rows {
		p.score(score, ri, probs[ri*p.M:(ri+1)*p.M])
		nj := replicateCounts(s, counts, B, j)
		for r := range B {
			if n := rowCount(nj, r); n != 0 {
				floats.AddScaled(g[r*nd:(r+1)*nd], n, score)
			}
		}
	}
	for r := range B {
		gr := g[r*nd : (r+1)*nd]
		for c := 1; c < p.M; c++ {
			for i := 0; i < p.W; i++ {
				gr[(c-1)*P+i] += LogitRidge * theta[(c-1)*P+i]
			}
		}
	}
	return g
}

// score writes fitted row r's gradient of its term of the objective (its
// weighted negative log likelihood) to dst, given its class
// probabilities prob at the coefficients.
func (p *logitFit) score(dst []float64, r int, prob []float64) {
	P := p.P
	xr := p.x[r*P : (r+1)*P]
	for c := 1; c < p.M; c++ {
		e := prob[c]
		if p.y[r] == c {
			e--
		}
		for i := 0; i < P; i++ {
			dst[(c-1)*P+i] = p.wt[r] * e * xr[i]
		}
	}
}

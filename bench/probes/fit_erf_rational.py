# Lawson-reweighted linearised least squares fit of erf(x / sqrt2) ~ x P(x^2) / Q(x^2) on [0, XMAX]
# (absolute error), with mpmath. Usage: python3 fit_erf_rational.py XMAX NP NQ
# Run here as: python3 fit_erf_rational.py 5.2 6 5  (prints the max error and the coefficients)
import mpmath as mp, sys
mp.mp.dps = 40
XMAX = mp.mpf(sys.argv[1]) if len(sys.argv) > 1 else mp.mpf('5.2')
NP = int(sys.argv[2]) if len(sys.argv) > 2 else 6   # numerator coeffs (odd powers x^1..x^(2NP-1))
NQ = int(sys.argv[3]) if len(sys.argv) > 3 else 5   # denominator coeffs beyond 1 (x^2..x^(2NQ))
N = 700
xs = [XMAX * (1 - mp.cos(mp.pi * (i + 0.5) / N)) / 2 for i in range(N)]  # dense near both ends
xs = sorted(set(xs + [XMAX * i / N for i in range(1, N + 1)]))
f = [mp.erf(x / mp.sqrt(2)) for x in xs]
def solve(weights, qprev):
    # unknowns a0..a_{NP-1}, b1..b_NQ; residual x P(s) - f Q(s), divided by qprev, times weight
    rows, rhs = [], []
    for x, fx, w, qp in zip(xs, f, weights, qprev):
        s = x * x
        row = [x * s**k for k in range(NP)] + [-fx * s**k for k in range(1, NQ + 1)]
        c = w / qp
        rows.append([c * r for r in row]); rhs.append(c * fx)
    A = mp.matrix(rows); b = mp.matrix(rhs)
    AtA = A.T * A; Atb = A.T * b
    sol = mp.lu_solve(AtA, Atb)
    return [sol[i] for i in range(NP)], [mp.mpf(1)] + [sol[NP + i] for i in range(NQ)]
def ev(a, b, x):
    s = x * x
    P = sum(a[k] * s**k for k in range(NP)); Q = sum(b[k] * s**k for k in range(NQ + 1))
    return x * P / Q, Q
w = [mp.mpf(1)] * len(xs); qprev = [mp.mpf(1)] * len(xs)
for it in range(60):
    a, b = solve(w, qprev)
    errs = []; qs = []
    for x, fx in zip(xs, f):
        v, Q = ev(a, b, x); errs.append(abs(v - fx)); qs.append(Q)
    qprev = qs
    m = max(errs)
    w = [wi * (e / m) ** mp.mpf('0.5') + mp.mpf('1e-30') for wi, e in zip(w, errs)]  # Lawson-ish
    s = sum(w); w = [wi / s * len(w) for wi in w]
    if it % 10 == 9: print(it, mp.nstr(m, 5), file=sys.stderr)
# fine check
fine = max(abs(ev(a, b, XMAX * i / 20000)[0] - mp.erf(XMAX * i / 20000 / mp.sqrt(2))) for i in range(20001))
print("max abs err", mp.nstr(fine, 5), file=sys.stderr)
print("P", [float(c) for c in a]); print("Q", [float(c) for c in b])

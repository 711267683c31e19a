"""Cases for the rules of the helpers of s2sgrad/runtime/reductions.py (see __init__.py)."""

import numpy as np

from s2sgrad import runtime as s2s

from . import V3, V4, W, uniform

TIES = np.array([[0.5, 0.5, -0.2, 0.1], [0.3, -0.4, 0.3, 0.3], [-0.1, 0.2, 0.0, 0.2]])
B34 = uniform((3, 4), 0.5, 1.5)
B4 = uniform((4,), 0.5, 1.5)
NANS = uniform((3, 4))
NANS[0, 1] = NANS[2, 3] = np.nan


def h_sum_vjp(g, x): return np.sum(np.sin(s2s.sum_vjp(g, x, 1)) * W) + np.sum(x * W)
def h_sum_vjp_keep(g): return np.sum(np.sin(s2s.sum_vjp(g, W, 0, True)) * W)
def h_sum_vjp_all(g): return np.sum(np.sin(s2s.sum_vjp(g, W)) * W)
def h_mean_vjp(g, x): return np.sum(np.sin(s2s.mean_vjp(g, x, 1)) * x)
def h_mean_vjp_keep(g): return np.sum(np.sin(s2s.mean_vjp(g, W, 0, True)) * W)
def h_mean_vjp_all(g): return np.sum(np.sin(s2s.mean_vjp(g, W)) * W)
def h_extremum_vjp(g, x): return np.sum(np.sin(s2s.extremum_vjp(g, np.max(x, axis=1), x, 1)) * W)
def h_extremum_vjp_all(g, x): return np.sum(np.sin(s2s.extremum_vjp(g, np.min(x), x)) * W)
def h_extremum_vjp_ties(g): return np.sum(np.sin(s2s.extremum_vjp(g, np.max(TIES, 0), TIES, 0)) * W)
def h_extremum_jvp(t): return np.sum(np.sin(s2s.extremum_jvp(t, np.max(TIES, 1), TIES, 1)) * V3)
def h_extremum_jvp_all(t, x): return np.sin(s2s.extremum_jvp(t, np.max(x), x)) * 2.0
def h_var_vjp(g, x): return np.sum(np.sin(s2s.var_vjp(g, x, 1)) * W)
def h_var_vjp_all(g, x): return np.sum(np.sin(s2s.var_vjp(g, x, None, ddof=1)) * W)
def h_var_vjp_keep(g, x): return np.sum(np.sin(s2s.var_vjp(g, x, 0, ddof=0, keepdims=True)) * W)
def h_std_vjp(g, s, x): return np.sum(np.sin(s2s.std_vjp(g, s, x, 1)) * W)
def h_std_vjp_all(g, s, x): return np.sum(np.sin(s2s.std_vjp(g, s, x, None, ddof=1)) * W)


def h_std_vjp_own(g, x):  # s computed from x, as generated code's residual is
    s = np.sqrt(np.mean((x - np.mean(x, axis=0, keepdims=True)) ** 2, axis=0, keepdims=True))
    return np.sum(np.sin(s2s.std_vjp(g, s, x, 0, ddof=0, keepdims=True)) * W)


def h_prod_vjp(g, p, x): return np.sum(np.sin(s2s.prod_vjp(g, p, x, 1)) * W)
def h_prod_vjp_all(g, p, x): return np.sum(np.sin(s2s.prod_vjp(g, p, x)) * W)
def h_nansum_vjp(g): return np.sum(np.sin(s2s.nansum_vjp(g, NANS, 1)) * W)
def h_nansum_vjp_all(g): return np.sum(np.sin(s2s.nansum_vjp(g, NANS)) * W)
def h_nanmean_vjp(g): return np.sum(np.sin(s2s.nanmean_vjp(g, NANS, 0, True)) * W)
def h_nanmean_vjp_all(g): return np.sum(np.sin(s2s.nanmean_vjp(g, NANS)) * W)
def h_nanvar_vjp(g, x): return np.sum(np.sin(s2s.nanvar_vjp(g, x, 1, ddof=1)) * W)
def h_nanvar_vjp_all(g, x): return np.sum(np.sin(s2s.nanvar_vjp(g, x)) * W)
def h_nanstd_vjp(g, s, x): return np.sum(np.sin(s2s.nanstd_vjp(g, s, x, 1)) * W)
def h_nanstd_vjp_all(g, s, x): return np.sum(np.sin(s2s.nanstd_vjp(g, s, x, None, ddof=1)) * W)
def h_nanprod_vjp(g, p, x): return np.sum(np.sin(s2s.nanprod_vjp(g, p, x, 0)) * W)
def h_ptp_vjp(g, x): return np.sum(np.sin(s2s.ptp_vjp(g, x, 1)) * W)
def h_ptp_vjp_all(g): return np.sum(np.sin(s2s.ptp_vjp(g, TIES)) * W)
def h_logsumexp_vjp(g, lse, a): return np.sum(np.sin(s2s.logsumexp_vjp(g, lse, a, 1)) * W)
def h_logsumexp_vjp_all(g, lse, a): return np.sum(np.sin(s2s.logsumexp_vjp(g, lse, a)) * W)


def h_logsumexp_vjp_bw(g, lse, a, b):
    return np.sum(np.sin(s2s.logsumexp_vjp(g, lse, a, 0, b, True)) * W)


def h_logsumexp_vjp_own(g, a):  # lse computed from a, as generated code's residual is
    lse = np.log(np.sum(np.exp(a), axis=1))
    return np.sum(np.sin(s2s.logsumexp_vjp(g, lse, a, 1)) * W)


def h_logsumexp_vjp_b(g, lse, a): return np.sum(np.sin(s2s.logsumexp_vjp_b(g, lse, a, 1, B34)) * W)
def h_logsumexp_vjp_b4(g, lse, a): return np.sum(np.sin(s2s.logsumexp_vjp_b(g, lse, a, 1, B4)) * V4)


def h_logsumexp_vjp_b_all(g, lse, a):
    return np.sum(np.sin(s2s.logsumexp_vjp_b(g, lse, a, None, B34)) * W)


A34 = uniform((3, 4))
POS34, POS3, POS4 = uniform((3, 4), 0.5, 1.5), uniform((3,), 0.5, 1.5), uniform((4,), 0.5, 1.5)


def h_average_vjp_a(g, w): return np.sum(np.sin(s2s.average_vjp_a(g, A34, 1, w)) * W)
def h_average_vjp_a_all(g, w): return np.sum(np.sin(s2s.average_vjp_a(g, A34, None, w)) * W)


def h_average_vjp_a_keep(g, w):
    return np.sum(np.sin(s2s.average_vjp_a(g, A34, 0, w, keepdims=True)) * W)


def h_average_vjp_a_mean(g): return np.sum(np.sin(s2s.average_vjp_a(g, A34, 0)) * W)


def h_average_vjp_weights(g, m, a, w):
    return np.sum(np.sin(s2s.average_vjp_weights(g, m, a, 1, w)) * w)


def h_average_vjp_weights_all(g, m, a, w):
    return np.sum(np.sin(s2s.average_vjp_weights(g, m, a, None, w)) * W)


def h_average_vjp_weights_keep(g, m, a, w):
    return np.sum(np.sin(s2s.average_vjp_weights(g, m, a, 0, w, keepdims=True)) * V3)


def h_spread_weights(w): return np.sum(np.sin(s2s.spread_weights(A34, 1, w)) * W)
def h_gather_weights(g): return np.sum(np.sin(s2s.gather_weights(g, A34, 1, V4)) * V4)
def h_gather_weights_full(g): return np.sum(np.sin(s2s.gather_weights(g, A34, 0, W)) * W)
def h_weight_sum(w): return np.sum(np.sin(s2s.weight_sum(A34, 1, w)) * V3[:, None])
def h_weight_sum_all(w): return np.sum(np.sin(s2s.weight_sum(A34, None, w)) * 2.0)


def h_nonzero_factor(x): return np.sum(np.sin(s2s.nonzero_factor(x)) * W)
def h_nonzero_factor_float(x): return np.sin(s2s.nonzero_factor(x)) * 2.0


def _nans(shape):
    x = uniform(shape)
    x.flat[[1, 6]] = np.nan
    return x


R = "s2sgrad.runtime."
# (rules, function, args, argnums or None for every float argument, rtol)
CASES = [
    (R + "sum_vjp", h_sum_vjp, (uniform((3,)), uniform((3, 4))), None, 1e-5),
    (R + "sum_vjp", h_sum_vjp_keep, (uniform((1, 4)),), None, 1e-5),
    (R + "sum_vjp", h_sum_vjp_all, (uniform(None),), None, 1e-5),
    (R + "mean_vjp", h_mean_vjp, (uniform((3,)), uniform((3, 4))), None, 1e-5),
    (R + "mean_vjp", h_mean_vjp_keep, (uniform((1, 4)),), None, 1e-5),
    (R + "mean_vjp", h_mean_vjp_all, (uniform(None),), None, 1e-5),
    (R + "extremum_vjp", h_extremum_vjp, (uniform((3,)), uniform((3, 4))), None, 1e-5),
    (R + "extremum_vjp", h_extremum_vjp_all, (uniform(None), uniform((3, 4))), None, 1e-5),
    (R + "extremum_vjp", h_extremum_vjp_ties, (uniform((4,)),), None, 1e-5),
    (R + "extremum_jvp", h_extremum_jvp, (uniform((3, 4)),), None, 1e-5),
    (R + "extremum_jvp", h_extremum_jvp_all, (uniform((3, 4)), uniform((3, 4))), None, 1e-5),
    (R + "var_vjp", h_var_vjp, (uniform((3,)), uniform((3, 4))), None, 1e-5),
    (R + "var_vjp", h_var_vjp_all, (uniform(None), uniform((3, 4))), None, 1e-5),
    (R + "var_vjp", h_var_vjp_keep, (uniform((1, 4)), uniform((3, 4))), None, 1e-5),
    (R + "std_vjp", h_std_vjp, (uniform((3,)), POS3, uniform((3, 4))), None, 1e-5),
    (R + "std_vjp", h_std_vjp_all,
     (uniform(None), uniform(None, 0.5, 1.5), uniform((3, 4))), None, 1e-5),
    (R + "std_vjp", h_std_vjp_own, (uniform((1, 4)), uniform((3, 4))), None, 1e-5),
    (R + "prod_vjp", h_prod_vjp, (uniform((3,)), POS3, POS34), None, 1e-5),
    (R + "prod_vjp", h_prod_vjp_all, (uniform(None), uniform(None, 0.5, 1.5), POS34), None, 1e-5),
    (R + "nansum_vjp", h_nansum_vjp, (uniform((3,)),), None, 1e-5),
    (R + "nansum_vjp", h_nansum_vjp_all, (uniform(None),), None, 1e-5),
    (R + "nanmean_vjp", h_nanmean_vjp, (uniform((1, 4)),), None, 1e-5),
    (R + "nanmean_vjp", h_nanmean_vjp_all, (uniform(None),), None, 1e-5),
    (R + "nanvar_vjp", h_nanvar_vjp, (uniform((3,)), _nans((3, 4))), None, 1e-5),
    (R + "nanvar_vjp", h_nanvar_vjp_all, (uniform(None), _nans((3, 4))), None, 1e-5),
    (R + "nanstd_vjp", h_nanstd_vjp, (uniform((3,)), POS3, _nans((3, 4))), None, 1e-5),
    (R + "nanstd_vjp", h_nanstd_vjp_all,
     (uniform(None), uniform(None, 0.5, 1.5), _nans((3, 4))), None, 1e-5),
    (R + "nanprod_vjp", h_nanprod_vjp,
     (uniform((4,)), POS4, np.where(np.isnan(_nans((3, 4))), np.nan, POS34)), None, 1e-5),
    (R + "ptp_vjp", h_ptp_vjp, (uniform((3,)), uniform((3, 4))), None, 1e-5),
    (R + "ptp_vjp", h_ptp_vjp_all, (uniform(None),), None, 1e-5),
    (R + "logsumexp_vjp", h_logsumexp_vjp,
     (uniform((3,)), uniform((3,)), uniform((3, 4))), None, 1e-5),
    (R + "logsumexp_vjp", h_logsumexp_vjp_all,
     (uniform(None), uniform(None), uniform((3, 4))), None, 1e-5),
    (R + "logsumexp_vjp", h_logsumexp_vjp_bw,
     (uniform((1, 4)), uniform((1, 4)), uniform((3, 4)), POS34), None, 1e-5),
    (R + "logsumexp_vjp", h_logsumexp_vjp_own, (uniform((3,)), uniform((3, 4))), None, 1e-5),
    (R + "average_vjp_a", h_average_vjp_a, (uniform((3,)), POS34), None, 1e-5),
    (R + "average_vjp_a", h_average_vjp_a, (uniform((3,)), POS4), None, 1e-5),
    (R + "average_vjp_a", h_average_vjp_a_all, (uniform(None), POS34), None, 1e-5),
    (R + "average_vjp_a", h_average_vjp_a_keep, (uniform((1, 4)), POS3), None, 1e-5),
    (R + "average_vjp_a", h_average_vjp_a_mean, (uniform((4,)),), None, 1e-5),
    (R + "average_vjp_weights", h_average_vjp_weights,
     (uniform((3,)), uniform((3,)), uniform((3, 4)), POS34), None, 1e-5),
    (R + "average_vjp_weights", h_average_vjp_weights,
     (uniform((3,)), uniform((3,)), uniform((3, 4)), POS4), None, 1e-5),
    (R + "average_vjp_weights", h_average_vjp_weights_all,
     (uniform(None), uniform(None), uniform((3, 4)), POS34), None, 1e-5),
    (R + "average_vjp_weights", h_average_vjp_weights_keep,
     (uniform((1, 4)), uniform((1, 4)), uniform((3, 4)), POS3), None, 1e-5),
    (R + "spread_weights", h_spread_weights, (POS4,), None, 1e-5),
    (R + "spread_weights", h_spread_weights, (POS34,), None, 1e-5),
    (R + "gather_weights", h_gather_weights, (uniform((3, 4)),), None, 1e-5),
    (R + "gather_weights", h_gather_weights_full, (uniform((3, 4)),), None, 1e-5),
    (R + "weight_sum", h_weight_sum, (POS4,), None, 1e-5),
    (R + "weight_sum", h_weight_sum, (POS34,), None, 1e-5),
    (R + "weight_sum", h_weight_sum_all, (POS34,), None, 1e-5),
    (R + "nonzero_factor", h_nonzero_factor, (uniform((3, 4)),), None, 1e-5),
    (R + "nonzero_factor", h_nonzero_factor_float, (uniform(None),), None, 1e-5),
    (R + "logsumexp_vjp_b", h_logsumexp_vjp_b,
     (uniform((3,)), uniform((3,)), uniform((3, 4))), None, 1e-5),
    (R + "logsumexp_vjp_b", h_logsumexp_vjp_b4,
     (uniform((3,)), uniform((3,)), uniform((3, 4))), None, 1e-5),
    (R + "logsumexp_vjp_b", h_logsumexp_vjp_b_all,
     (uniform(None), uniform(None), uniform((3, 4))), None, 1e-5),
]

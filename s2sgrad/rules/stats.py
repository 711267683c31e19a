"""scipy.stats: the densities (``pdf``, ``logpdf``), distribution functions (``cdf``, ``logcdf``,
``sf``, ``logsf``) and masses (``pmf``, ``logpmf``) of the distributions people write likelihoods
with, each with ``loc`` and ``scale``, differentiable in every real parameter (a count ``k`` has
no template: a varied one is refused). Written with ``z = (x - loc) / scale``; a ``pdf`` rule is
its ``logpdf`` rule's slopes times ``ans``. A distribution function other than norm's is
differentiable in ``x``, ``loc`` and ``scale`` only (in a shape parameter it needs the incomplete
gamma or beta function's derivative in it): a varied shape parameter is refused."""

from .table import defvjp

_Z = "((x - loc) / scale)"
# the standard normal density at z, divided by scale: d cdf / dx
_DENSITY = f"np.exp(-0.5 * {_Z} ** 2) / (np.sqrt(2.0 * np.pi) * scale)"
# the same divided by the value (``ans`` a log of cdf or sf): d log cdf / dx, read as one exp
_DENSITY_OVER = f"np.exp(-0.5 * {_Z} ** 2 - ans) / (np.sqrt(2.0 * np.pi) * scale)"


def _density_pair(distribution: str, signature: str, slopes: dict) -> tuple:
    """The rules of ``scipy.stats.<distribution>.logpdf`` and ``.pdf`` (``signature``: the
    parameters after ``x``), from the slopes of the log-density in each parameter."""
    logpdf = {param: f"g * ({slope})" for param, slope in slopes.items()}
    pdf = {param: f"g * ans * ({slope})" for param, slope in slopes.items()}
    return (defvjp(f"scipy.stats.{distribution}.logpdf(x, {signature})", elementwise=True, **logpdf),
            defvjp(f"scipy.stats.{distribution}.pdf(x, {signature})", elementwise=True, **pdf))


def _normal_tails(kind: str, sign: str, over: str) -> object:
    """``scipy.stats.norm.<kind>``: d/dx is ``sign`` times the density (``over``: the density, or
    the density over the value for a log), d/dloc its negative, d/dscale its negative times z."""
    return defvjp(f"scipy.stats.norm.{kind}(x, loc=0, scale=1)", elementwise=True,
                  x=f"{sign}g * {over}", loc=f"{'' if sign else '-'}g * {over}",
                  scale=f"{'' if sign else '-'}g * {over} * {_Z}")


_NORM = {"x": f"-{_Z} / scale", "loc": f"{_Z} / scale", "scale": f"({_Z} ** 2 - 1.0) / scale"}
# Student's t: log f = const(df) - log scale - (df + 1) / 2 log(1 + z**2 / df)
_T = {
    "x": f"-(df + 1.0) * {_Z} / (scale * (df + {_Z} ** 2))",
    "df": f"0.5 * (s2s.polygamma(0, (df + 1.0) / 2.0) - s2s.polygamma(0, df / 2.0)) - 0.5 / df"
          f" - 0.5 * np.log1p({_Z} ** 2 / df) + (df + 1.0) * {_Z} ** 2 / (2.0 * df * (df + {_Z} ** 2))",
    "loc": f"(df + 1.0) * {_Z} / (scale * (df + {_Z} ** 2))",
    "scale": f"((df + 1.0) * {_Z} ** 2 / (df + {_Z} ** 2) - 1.0) / scale",
}
# gamma: log f = (a - 1) log z - z - gammaln(a) - log scale
_GAMMA = {
    "x": f"((a - 1.0) / {_Z} - 1.0) / scale",
    "a": f"np.log({_Z}) - s2s.polygamma(0, a)",
    "loc": f"(1.0 - (a - 1.0) / {_Z}) / scale",
    "scale": f"({_Z} - a) / scale",
}
# beta: log f = (a - 1) log z + (b - 1) log(1 - z) - betaln(a, b) - log scale
_BETA = {
    "x": f"((a - 1.0) / {_Z} - (b - 1.0) / (1.0 - {_Z})) / scale",
    "a": f"np.log({_Z}) - s2s.polygamma(0, a) + s2s.polygamma(0, a + b)",
    "b": f"np.log1p(-{_Z}) - s2s.polygamma(0, b) + s2s.polygamma(0, a + b)",
    "loc": f"((b - 1.0) / (1.0 - {_Z}) - (a - 1.0) / {_Z}) / scale",
    "scale": f"((b - 1.0) * {_Z} / (1.0 - {_Z}) - a) / scale",
}
# chi2: gamma with a = df / 2 and scale 2 scale
_CHI2 = {
    "x": f"((df / 2.0 - 1.0) / {_Z} - 0.5) / scale",
    "df": f"0.5 * (np.log({_Z} / 2.0) - s2s.polygamma(0, df / 2.0))",
    "loc": f"(0.5 - (df / 2.0 - 1.0) / {_Z}) / scale",
    "scale": f"(0.5 * {_Z} - df / 2.0) / scale",
}



def _distribution(distribution: str, signature: str, log_density: str, kinds=("cdf",)) -> tuple:
    """The rules of ``scipy.stats.<distribution>.<kind>`` for ``kinds`` (``cdf``, ``logcdf``)
    in ``x``, ``loc`` and ``scale``, from the log-density at ``z`` (without ``- log scale``):
    d/dx is the density (over the value for a log), d/dloc its negative, d/dscale its negative
    times z. The shape parameters have no template: a varied one is refused."""
    rules = []
    for kind in kinds:
        density = f"np.exp({log_density}{' - ans' if kind.startswith('log') else ''}) / scale"
        rules.append(defvjp(f"scipy.stats.{distribution}.{kind}(x, {signature})", elementwise=True,
                            x=f"g * {density}", loc=f"-g * {density}", scale=f"-g * {density} * {_Z}"))
    return tuple(rules)


_LOG_DENSITIES = {
    "t": (f"s2s.gammaln((df + 1.0) / 2.0) - s2s.gammaln(df / 2.0) - 0.5 * np.log(df * np.pi)"
          f" - (df + 1.0) / 2.0 * np.log1p({_Z} ** 2 / df)"),
    "gamma": f"(a - 1.0) * np.log({_Z}) - {_Z} - s2s.gammaln(a)",
    "beta": f"(a - 1.0) * np.log({_Z}) + (b - 1.0) * np.log1p(-{_Z}) - s2s.gammaln(a) - s2s.gammaln(b)"
            f" + s2s.gammaln(a + b)",
    "chi2": f"(df / 2.0 - 1.0) * np.log({_Z} / 2.0) - {_Z} / 2.0 - s2s.gammaln(df / 2.0) - np.log(2.0)",
}

RULES = (
    *_density_pair("norm", "loc=0, scale=1", _NORM),
    *_distribution("t", "df, loc=0, scale=1", _LOG_DENSITIES["t"], ("cdf", "logcdf")),
    *_distribution("gamma", "a, loc=0, scale=1", _LOG_DENSITIES["gamma"]),
    *_distribution("beta", "a, b, loc=0, scale=1", _LOG_DENSITIES["beta"]),
    *_distribution("chi2", "df, loc=0, scale=1", _LOG_DENSITIES["chi2"]),
    # P(K <= k) falls as mu grows by the mass at floor(k - loc)
    defvjp("scipy.stats.poisson.cdf(k, mu, loc=0)", elementwise=True,
           mu="-g * np.exp(np.floor(k - loc) * np.log(mu) - mu - s2s.gammaln(np.floor(k - loc) + 1.0))"),
    _normal_tails("cdf", "", _DENSITY),
    _normal_tails("logcdf", "", _DENSITY_OVER),
    _normal_tails("sf", "-", _DENSITY),
    _normal_tails("logsf", "-", _DENSITY_OVER),
    *_density_pair("t", "df, loc=0, scale=1", _T),
    *_density_pair("gamma", "a, loc=0, scale=1", _GAMMA),
    *_density_pair("beta", "a, b, loc=0, scale=1", _BETA),
    *_density_pair("chi2", "df, loc=0, scale=1", _CHI2),
    # Poisson: log p = k log mu - mu - gammaln(k + 1), k shifted by loc (a whole number)
    defvjp("scipy.stats.poisson.logpmf(k, mu, loc=0)", elementwise=True, mu="g * ((k - loc) / mu - 1.0)"),
    defvjp("scipy.stats.poisson.pmf(k, mu, loc=0)", elementwise=True, mu="g * ans * ((k - loc) / mu - 1.0)"),
)

# ----- multivariate densities: dirichlet and multivariate_normal ----------------------------------
# dirichlet: log f = sum((alpha - 1) log x) + gammaln(sum(alpha)) - sum(gammaln(alpha)), the K
# components along x's first axis (completed by s2s.simplex_full where x holds K - 1), one value per
# trailing index; alpha a vector. The slopes in x and alpha, then times ans for pdf.
_XF = "s2s.simplex_full(x, np.size(alpha))"
_ALPHA = "np.reshape(alpha, (-1,) + (1,) * (np.ndim(x) - 1))"  # along x's first axis
_ALPHA_SLOPE = f"(np.log({_XF}) + s2s.polygamma(0, np.sum(alpha)) - s2s.polygamma(0, {_ALPHA}))"


def _dirichlet(kind: str, scale: str) -> object:
    """The rule of ``scipy.stats.dirichlet.<kind>``; ``scale`` is what the log-density's slopes
    are multiplied by (``""`` for logpdf, ``"ans * "`` for pdf)."""
    g = f"np.expand_dims({'g * ans' if scale else 'g'}, 0)"
    return defvjp(
        f"scipy.stats.dirichlet.{kind}(x, alpha)",
        x=f"s2s.simplex_full_vjp({g} * ({_ALPHA} - 1.0) / {_XF}, x)",
        alpha=f"np.sum(np.reshape({g} * {_ALPHA_SLOPE}, (np.size(alpha), -1)), axis=1)",
        jvps={"x": f"{scale}np.sum(({_ALPHA} - 1.0) / {_XF} * s2s.simplex_full_tangent(t, np.size(alpha)), axis=0)",
              "alpha": f"{scale}np.sum(np.reshape(t, np.shape({_ALPHA})) * {_ALPHA_SLOPE}, axis=0)"},
    )


# multivariate_normal: log f = -(k log 2 pi + log det C + r^T C^-1 r) / 2 per point, r the point's
# deviation from the mean (s2s.mvn_deviations: one row per point), C the covariance matrix scipy
# reads (s2s.mvn_covariance: a number, a diagonal, or a matrix's lower triangle made symmetric).
# With S = r C^-1 (rows): d/dx = -S, d/dmean = S, d/dC = (S^T S - C^-1) / 2, each point's times its
# adjoint; allow_singular takes the pseudo-inverse (x and mean) and refuses a singular C (cov).
_R = "s2s.mvn_deviations(x, mean, cov)"
_C = "s2s.mvn_covariance(cov, mean)"
_REGULAR = f"s2s.mvn_regular({_C}, allow_singular)"
_SOLVED = (f"({_R} @ np.linalg.pinv({_C}) if allow_singular else "
           f"np.transpose(np.linalg.solve({_C}, np.transpose({_R}))))")
_DC = "s2s.mvn_covariance(t, mean)"


def _mvn(kind: str, scale: str) -> object:
    """The rule of ``scipy.stats.multivariate_normal.<kind>`` (``scale`` as in ``_dirichlet``)."""
    g = f"np.reshape({'g * ans' if scale else 'g'}, (-1, 1))"  # one row per point
    return defvjp(
        f"scipy.stats.multivariate_normal.{kind}(x, mean=None, cov=1, allow_singular=False)",
        constant_in=("allow_singular",),
        x=f"np.reshape(-{g} * {_SOLVED}, np.shape(x))",
        mean=f"s2s.unbroadcast({g} * {_SOLVED}, mean)",
        cov=(f"s2s.mvn_covariance_vjp(0.5 * (np.transpose({_SOLVED}) @ ({g} * {_SOLVED}) - np.sum({g}) * "
             f"np.linalg.inv({_REGULAR})), cov)"),
        jvps={"x": f"{scale}np.reshape(-np.sum({_SOLVED} * np.reshape(t, np.shape({_R})), axis=-1), np.shape(ans))",
              "mean": f"{scale}np.reshape(np.sum({_SOLVED} * t, axis=-1), np.shape(ans))",
              "cov": (f"{scale}np.reshape(0.5 * np.sum(({_SOLVED} @ {_DC}) * {_SOLVED}, axis=-1) - 0.5 * "
                      f"np.trace(np.linalg.solve({_REGULAR}, {_DC})), np.shape(ans))")},
    )


# its entropy, (k log(2 pi e) + log det C) / 2: d/dC = C^-1 / 2 (the mean does not enter)
_MVN_ENTROPY = defvjp(
    "scipy.stats.multivariate_normal.entropy(mean=None, cov=1)", constant_in=("mean",),
    cov=f"s2s.mvn_covariance_vjp(0.5 * g * np.linalg.inv({_C}), cov)",
    jvps={"cov": f"0.5 * np.trace(np.linalg.solve({_C}, {_DC}))"},
)

RULES += (_dirichlet("logpdf", ""), _dirichlet("pdf", "ans * "), _mvn("logpdf", ""), _mvn("pdf", "ans * "),
          _MVN_ENTROPY)

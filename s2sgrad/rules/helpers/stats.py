"""Rules of the helpers of s2sgrad/runtime/stats.py: dirichlet's completed quantiles (affine in
x: its tangent and adjoint helpers are each other's transposes), multivariate_normal's deviations
(linear in the points and the mean together), its covariance matrix and that matrix's transpose
(each the other's adjoint), and the identity that refuses a singular covariance."""

from ..table import defvjp

RULES = (
    defvjp("s2sgrad.runtime.simplex_full(x, k)", constant_in=("k",),
           jvps={"x": "s2s.simplex_full_tangent(t, k)"}, x="s2s.simplex_full_vjp(g, x)"),
    defvjp("s2sgrad.runtime.simplex_full_tangent(value, k)", linear=("value",), constant_in=("k",),
           value="s2s.simplex_full_vjp(g, value)"),
    # value holds k components: the transpose appends to g where it holds k - 1
    defvjp("s2sgrad.runtime.simplex_full_vjp(value, x)", linear=("value",), constant_in=("x",),
           value="s2s.simplex_full_tangent(g, np.shape(value)[0])"),
    defvjp("s2sgrad.runtime.mvn_deviations(x, mean=None, cov=1)", constant_in=("cov",),
           jvps={"x": "np.reshape(t, np.shape(ans))", "mean": "-np.broadcast_to(t, np.shape(ans))"},
           x="np.reshape(g, np.shape(x))", mean="s2s.unbroadcast(-g, mean)"),
    defvjp("s2sgrad.runtime.mvn_covariance(cov=1, mean=None)", linear=("cov",), constant_in=("mean",),
           cov="s2s.mvn_covariance_vjp(g, cov)"),
    # value is a (k, k) matrix: its first row has the k elements mvn_covariance reads the
    # dimension from (where cov is a number)
    defvjp("s2sgrad.runtime.mvn_covariance_vjp(value, cov)", linear=("value",), constant_in=("cov",),
           value="s2s.mvn_covariance(g, value[0])"),
    defvjp("s2sgrad.runtime.mvn_regular(c, allow_singular=False)", linear=("c",), constant_in=("allow_singular",),
           c="g"),
)

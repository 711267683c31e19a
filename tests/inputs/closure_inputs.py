"""Local functions inside differentiated functions (issue 26): lambdas and nested defs called
where they are defined, closing over the enclosing function's values (differentiated ones too).
Used by tests/lower/test_closures.py; every function here is also run by autograd."""

import numpy as np

import s2sgrad

W3 = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4], [-0.6, 0.2, 0.7]])


def softplus_lambda(x):
    act = lambda z: np.log1p(np.exp(z))  # noqa: E731 (what users write)
    return np.sum(act(x) * act(x * 0.5))


def predict_closure(W, x):
    """A closure over the differentiated weights, called several times and in a loop."""
    def predict(inp):
        return np.tanh(inp @ W)

    h = predict(x)
    for _ in range(3):
        h = predict(h) * 0.5 + h
    return np.sum(h ** 2)


def closure_with_early_return(x):
    def clipped(v, limit):
        if np.sum(v) > limit:
            return v * 0.5
        w = np.sin(v)
        return w * v

    return np.sum(clipped(x, 1.0) + clipped(x * 2.0, 10.0))


def closure_with_a_loop_and_a_return_inside(x):
    def first_large(v):
        for i in range(v.shape[0]):
            if v[i] > 0.6:
                return v[i] * v
        return v * v

    return np.sum(first_large(x)) + np.sum(first_large(x - 0.2))


def defaults_and_keywords(x, scale=1.5):
    def scaled(v, k=scale, *, power=2):
        return np.sum((v * k) ** power)

    scale = 3.0  # the default was evaluated where the def ran: 1.5
    return scaled(x) + scaled(x, power=3) + scaled(k=scale, v=np.cos(x))


def closures_calling_closures(x):
    act = lambda z: np.tanh(z)  # noqa: E731
    double = lambda z: act(z) * 2.0  # noqa: E731

    def apply(fn, v):
        return fn(v) + v

    return np.sum(apply(double, x) * apply(act, x ** 2))


def closure_in_a_comprehension(x):
    act = lambda z: np.exp(-z * z)  # noqa: E731
    parts = [act(x[i]) * x[i] for i in range(x.shape[0])]
    return sum(parts) + sum(act(v) for v in x)


def immediate_lambda(x):
    return np.sum((lambda z, c=2.0: np.sin(z) * c)(x))


def late_binding(x):
    c = 1.0
    times_c = lambda v: v * c  # noqa: E731
    c = np.sum(x)  # read when called, as Python's closures do
    return np.sum(times_c(x) ** 2)


def closure_names_shadowing_the_callers(x):
    y = x * 2.0

    def inner(y):
        z = np.exp(y)
        y = z * 0.5
        return y + z

    z = inner(x)  # the caller's y and z stay its own
    return np.sum(z * y)


def nested_defs(x):
    def outer(v):
        def square(u):
            return u * u

        return square(v) + square(np.sin(v))

    return np.sum(outer(x) * outer(x * 0.3))


def procedure_writing_a_local_list(x):
    out = []

    def push(v):
        out.append(np.sin(v))

    push(x)
    push(x * x)
    return np.sum(out[0] * out[1])


def closure_in_an_if_test_and_a_loop_iterable(x):
    total = lambda v: np.sum(v)  # noqa: E731
    rows = lambda v: [v, v * 2.0]  # noqa: E731
    out = 0.0
    if total(x) > 0.0:
        for r in rows(x):
            out = out + np.sum(np.cos(r))
    return out


@s2sgrad.differentiable(order=2)
def decorated_predict(x):
    def layer(inp):
        return np.tanh(inp @ W3)

    return np.sum(layer(layer(x)) ** 2)


def _helper_with_local_functions(h, W):
    act = lambda z: np.log1p(np.exp(z))  # noqa: E731

    def layer(v):
        return act(v @ W)

    return layer(layer(h))


def calls_a_helper_holding_local_functions(x):
    return np.sum(_helper_with_local_functions(x[:3], W3) ** 2) + np.sum(x[3:])


def apply(f, z, times=1):
    """A helper of the user's taking a function (inlined where it is given a local one)."""
    for _ in range(times):
        z = f(z)
    return z


def compose(f, g, z):
    return apply(f, g(z))


def passes_local_functions_to_helpers(x):
    act = lambda z: np.log1p(np.exp(z))  # noqa: E731

    def scaled(v):
        return np.sin(v) * 1.5

    h = apply(act, x, times=2)
    return np.sum(compose(scaled, act, h) ** 2) + np.sum(apply(scaled, x))


# ----- local functions returned by local functions, stored in lists and dicts ------------------


def factory_of_closures(x):
    """``make_act()`` then ``act(z)``: each call of the factory makes a function of its own,
    which keeps the values the factory was given (``k`` is bound again after)."""
    def make_act(scale, shift=0.0):
        def act(z):
            return np.tanh(z * scale) + shift

        return act

    k = 0.5
    act = make_act(k)
    soft = make_act(2.0, shift=0.1)
    k = 3.0  # act keeps the 0.5 it was made with
    return np.sum(act(x) * soft(x * k))


def factory_returning_a_lambda(x):
    """Factories returning a lambda, kept under a name or called at once, given a local function
    (by name, a table's entry)."""
    def power_of(p):
        return lambda z: z ** p

    def compose(fn, scale):
        return lambda z: fn(z) * scale

    square = power_of(2)
    act = lambda z: np.sin(z)  # noqa: E731
    layers = [act, square]
    twice = compose(act, 2.0)
    cubed = compose(layers[1], x[0])  # a table's entry given, and a differentiated value
    return np.sum(square(x) + power_of(3)(x) * 0.5 + twice(x) + cubed(x))


def functions_in_a_list_and_a_dict(x):
    """Local functions (names and lambdas) in a list and a dict, called by constant keys (a
    negative index too) and kept under a name."""
    act = lambda z: np.sin(z)  # noqa: E731

    def scaled(z, c=2.0):
        return z * c

    layers = [act, scaled, lambda z: np.exp(-z * z)]
    named = {"act": act, "soft": lambda z: np.log1p(np.exp(z))}
    first = layers[0]
    h = layers[1](x, 0.5) + layers[-1](x)
    return np.sum(named["soft"](h) * first(x) + named["act"](h))


def factory_called_in_a_loop(x):
    """A function made on each iteration from that iteration's value, called there and after
    the loop (the last one made)."""
    def make_layer(w):
        def layer(z):
            return np.tanh(z * w) + z

        return layer

    h = x
    for w in (0.5, -0.3, 0.8):
        step = make_layer(w * np.sum(x))
        h = step(h) * 0.5
    return np.sum(step(h) ** 2)


def factory_closing_over_weights(W, x):
    """A factory of predictors over the differentiated weights (a tuple of them kept too)."""
    def make_predict(weights, bias):
        def predict(inp):
            return np.tanh(inp @ weights + bias)

        return predict

    predict = make_predict(W, 0.1)
    wide = make_predict(W * 2.0, -0.2)
    both = (predict, wide)
    return np.sum(both[0](x) * both[1](x) + predict(x) ** 2)


def nested_factories(x):
    """A factory making a factory (``outer(a)(b)(z)``), one made from a differentiated value."""
    def outer(a):
        def mid(b):
            return lambda z: np.sin(z * a) * b

        return mid

    k = outer(np.sum(x))(3.0)
    return np.sum(outer(2.0)(x[0])(x) + k(x))


def table_of_factories(x):
    """Lambdas making lambdas, in a dict, called by constant keys."""
    makers = {"sin": lambda c: (lambda z: np.sin(z * c)), "tanh": lambda c: (lambda z: np.tanh(z) * c)}
    f1 = makers["sin"](2.0)
    f2 = makers["tanh"](x[1])
    return np.sum(f1(x) * f2(x))

"""Functions s2sgrad must refuse; the refused line carries the marker comment `# refused`."""

import numpy as np
import scipy.integrate
import scipy.special

GLOBAL_ARRAY = np.zeros(3)


def helper_condition(x):
    total = 0.0
    for part in x:  # a loop: the helper is called, not inlined (lower/callees.py)
        total = total + part
    return total > 1.0


def uses_try(x):
    try:  # refused
        y = np.sin(x)
    except ValueError:
        y = x
    return y


def uses_with(x):
    with open("f") as (fh, other):  # refused
        pass
    return x


def uses_yield(x):
    yield x  # refused


async def uses_async(x):  # refused
    return x


def uses_global(x):
    global COUNTER  # refused
    return x


def uses_nonlocal(x):
    total = 0.0

    def inner():
        nonlocal total  # refused
        total = total + np.sum(x)
    inner()
    return total


def uses_class(x):
    class Box:  # refused
        pass
    return x


def star_kwargs(x, **options):  # refused
    return np.sum(x)


def star_call(x):
    return np.add(*x)  # refused


def unknown_function(x):
    y = x * 2.0
    return np.sum(scipy.special.ellipk(y))  # refused


def unknown_method(x):
    return x.cumprod_like_nothing().sum()  # refused


def subscript_write_to_global(x):
    GLOBAL_ARRAY[0] = 1.0  # refused
    return np.sum(x)


def subscript_write_nested(x):
    y = [x, x]
    y[0][1] = 2.0  # refused
    return np.sum(x)


def inplace_method(x):
    y = x * 2.0
    y.setflags(write=False)  # refused: a method of a local the rule table does not know
    return np.sum(y)


def attribute_write(x):
    x.shape = (2, 2)  # refused
    return np.sum(x)


def lambda_inside(x):
    return np.sum(np.apply_along_axis(lambda v: v * 2, 0, x))  # refused


def comprehension(x):
    return np.sum(x) if x[0] > 0 else sum([v * 2 for v in x])  # refused


def no_return(x):  # refused
    y = x * 2.0


def unknown_keyword(x):
    return np.sum(x, where=x > 0)  # refused


def recursive(x):
    return recursive(x * 0.5) + x  # refused


def return_in_with(x):
    for i in range(3):
        with np.errstate(all="ignore"):
            return x  # refused
    return x


def computed_while_condition(x):
    while helper_condition(x):  # refused
        x = x * 0.5
    return x


def set_comprehension(x):
    parts = {float(x[k]) for k in range(3)}  # refused
    return sum(parts)


def calls_builtin_without_rule(x):
    return np.sum(divmod(x, 2.0)[1])  # refused


def index_built_row(x):  # np.r_ of arrays, numbers and slices is differentiated; a directive is not
    y = np.sin(x)
    return np.sum(np.r_["0,2", y, x] ** 2)  # refused


def index_built_columns(x):
    return np.sum(np.c_["0", x, x * 2.0] ** 2)  # refused


def decay(y, t):
    return -y


def ode_solution(x):  # scipy's adaptive solver: no exact derivative (the hint: a fixed-step loop)
    return np.sum(scipy.integrate.odeint(decay, x, np.linspace(0.0, 1.0, 5)))  # refused


def constant_indexed_by_varied(x):
    return np.sum(GLOBAL_ARRAY[x.astype(int)] * x)  # refused

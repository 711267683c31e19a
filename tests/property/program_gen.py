"""Random programs in s2sgrad's supported subset, as Python source, for tests/property/test_property.py.

A program is a module holding ``f(x, v, s, flag)`` (``x`` of shape (3, 4), ``v`` of shape (4,),
``s`` a Python float, ``flag`` a Python bool), up to three helper functions it calls (plain,
closures, helpers taking a tuple or returning a pair, ``@s2sgrad.custom_gradient`` helpers) and
sometimes a second module whose helpers it imports.

Values stay bounded: every expression carries an upper bound on its magnitude, and an operand that
could grow too large is squashed (``np.tanh``/``np.sin``/``np.cos``) before it is used; ``exp`` only
sees small arguments, ``log``/``sqrt``/fractional powers only positive ones (``1.0 + a * a``), and a
divisor is bounded away from zero. Loop-carried variables are updated by contractions, so a bound
holds for every iteration.

Computed conditions never sit near a tie. Which way each condition goes is drawn when the program
is generated, so the path through the program is known statically (shapes, bounds, list lengths
and trip counts follow the taken path). Each condition is a *site* ``value OP threshold``; the
program is first run as a *probe* in which the site records every value it sees and returns the
drawn outcome, and the threshold is then placed between the values seen on the two sides (or
``MARGIN`` beyond them). The probe and the final program therefore take the same path, and a
perturbation of the inputs by a finite-difference step cannot flip any condition. A ``while``
condition is a site too: its value is ``tanh(...) + 3.0 * steps`` (the loop's own counter), and its
drawn outcome is "true while ``steps`` < the drawn trip count", so the threshold falls in a gap of
width at least 1 between the last true and the first false value.

In-place updates (``+=``-family, index writes) only touch names that cannot share memory with
another name that is read later (``E.fresh`` and the loops' *pinned* sets); ``generate(ch,
refuse=True)`` instead ends the program with an in-place update through an alias or a view that
s2sgrad must refuse, marked ``# refused``.

Every production records a tag in ``Program.tags``; tests/property/test_property.py maps the README's
"What is supported" list onto these tags.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

M, V, S, K, R = (3, 4), (4,), (), (3, 1), (3,)
MARGIN = 0.5
BIG = 6.0  # operands above this bound are squashed before arithmetic that multiplies bounds
NAME_RE = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


class Chooser:
    """Random choices, from hypothesis (``data.draw``) or from ``random.Random`` (for replays)."""

    def __init__(self, data=None, seed=None):
        self.data = data
        self.seed = seed
        self.rnd = random.Random(seed)

    def int(self, lo, hi):
        if self.data is not None:
            from hypothesis import strategies as st

            return self.data.draw(st.integers(lo, hi))
        return self.rnd.randint(lo, hi)

    def choice(self, seq):
        seq = list(seq)
        return seq[self.int(0, len(seq) - 1)]

    def bool(self, percent=50):
        return self.int(0, 99) < percent


@dataclass
class E:
    """An expression: source text, its shape on the taken path, a bound on |value|, and whether
    it is a new array (not a view of, or alias to, another name), so ``+=`` may act on it."""

    src: str
    shape: tuple
    bound: float
    fresh: bool = True


@dataclass
class Site:
    """A condition ``value OP threshold``. ``trips`` is None for an ordinary site (its outcome is
    ``outcome`` every time); for a while loop's site the outcome is ``steps < trips``."""

    value: str
    op: str
    outcome: bool
    threshold: float = 0.0
    steps: str = None
    trips: int = None

    def decide(self, steps=None):
        if self.trips is None:
            return self.outcome
        return steps < self.trips


# The autograd twin of a custom_gradient helper whose stated gradient is not its value's
# derivative: an autograd primitive with that gradient (summed to each argument's shape, as
# s2sgrad sums a broadcast gradient down)
STATED_TWIN_HEADER = """from autograd.extend import primitive, defvjp


def _sum_to(g, a):
    while np.ndim(g) > np.ndim(a):
        g = np.sum(g, axis=0)
    for i, n in enumerate(np.shape(a)):
        if n == 1 and np.shape(g)[i] != 1:
            g = np.sum(g, axis=i, keepdims=True)
    return g"""


@dataclass
class Program:
    helpers: list = field(default_factory=list)  # (source, autograd twin source)
    lib_helpers: list = field(default_factory=list)  # the same, for the imported module
    lib_names: list = field(default_factory=list)  # helper names main imports from it
    imports: set = field(default_factory=set)  # "math", "special", "s2sgrad", "garray", "gbatch"
    main: str = ""
    sites: list = field(default_factory=list)
    tags: Counter = field(default_factory=Counter)
    autograd: bool = True  # False: autograd cannot run it (index writes)
    refused: bool = False  # the program ends with an in-place update s2sgrad must refuse
    tree: bool = False  # the program defines f_tree(p, flag) and tree_args(x, v, s): tree_arguments
    star: tuple = ()  # the program defines f_star: (order of x, v, s in *xs, flag keyword-only)
    obj: tuple = ()  # the program defines f_obj and obj_arg(): (f_obj's parameters, the object's)
    x: np.ndarray = None
    v: np.ndarray = None
    s: float = 0.0
    flag: bool = False

    def _header(self, probe, twin):
        parts = ["import autograd.numpy as np" if twin else "import numpy as np"]
        if "math" in self.imports:
            parts.append("import autograd.numpy as math" if twin else "import math")
        if "special" in self.imports:
            parts.append("from autograd.scipy import special" if twin else "from scipy import special")
        for module in ("stats", "signal"):  # scipy_terms
            if module in self.imports:
                parts.append(f"from autograd.scipy import {module}" if twin else f"from scipy import {module}")
        if "slinalg" in self.imports:  # scipy_terms
            parts.append("from autograd.scipy import linalg as slinalg" if twin else "from scipy import linalg as slinalg")
        if "garray" in self.imports:
            parts.append("GM = np.linspace(-1.0, 1.0, 12).reshape(3, 4)")
        if "logging" in self.imports:
            parts.append("import logging\nLOG = logging.getLogger('s2sgrad_prop')")
        if "geye" in self.imports:  # linalg_shared's diagonal (a global: one name, read as one value)
            parts.append("GEYE = 2.0 * np.eye(3)")
        if "gbatch" in self.imports:
            parts.append("GB = np.linspace(-1.0, 1.0, 12).reshape(3, 4)\nGS = 0.5")
        if "s2sgrad" in self.imports and not twin:
            parts.append("import s2sgrad")
        if "stated" in self.imports and twin:
            parts.append(STATED_TWIN_HEADER)
        if probe:
            parts.append("_probe = None")
        return "\n".join(parts) + "\n"

    def _sites(self, text, probe):
        # a site's value may hold earlier sites (never later ones): replace the later first
        for k, site in reversed(list(enumerate(self.sites))):
            if probe:
                extra = f", {site.steps}" if site.steps else ""
                cond = f"_probe({k}, {site.value}{extra})"
            else:
                cond = f"{site.value} {site.op} {site.threshold!r}"
            text = text.replace(f"__SITE{k}__", cond)
        return text

    @staticmethod
    def _twin(text):
        # autograd has no derivative for copies: an undecorated twin multiplies by 1.0 instead;
        # ``z += e`` on a name no other name shares is ``z = z + (e)`` (autograd cannot add a
        # traced value into a constant array in place)
        text = re.sub(r"(?m)^(\s*)([A-Za-z_][A-Za-z_0-9]*) ([-+*/])= ([^#\n]*?)(\s*#[^\n]*)?$",
                      r"\1\2 = \2 \3 (\4)\5", text)
        text = re.sub(r"np\.copy\(([A-Za-z_0-9]+)\)", r"(\1 * 1.0)", text)
        text = text.replace("GM.dot(", "np.dot(GM, ").replace(".item()", "")  # autograd: no .item
        return re.sub(r"([A-Za-z_][A-Za-z_0-9]*)\.copy\(\)", r"(\1 * 1.0)", text)

    def render(self, probe: bool, twin: bool = False, lib: str = "s2sgrad_prop_lib") -> str:
        """The main module's source; ``twin``: the autograd twin (autograd.numpy, custom gradients
        undecorated, copies as products)."""
        pick = 1 if twin else 0
        head = self._header(probe, twin)
        if self.lib_names:
            head += f"from {lib} import {', '.join(self.lib_names)}\n"
        text = "\n\n".join([h[pick] for h in self.helpers] + [self.main])
        text = self._sites(text, probe)
        if twin:
            text = self._twin(text)
        text = text.replace("__DISPLAY__(", "np.array(" if twin else "(")
        return head + "\n\n" + text + "\n"

    def render_lib(self, probe: bool, twin: bool = False) -> str:
        pick = 1 if twin else 0
        text = self._sites("\n\n".join(h[pick] for h in self.lib_helpers), probe)
        if twin:
            text = self._twin(text)
        text = text.replace("__DISPLAY__(", "np.array(" if twin else "(")
        return self._header(probe, twin) + "\n\n" + text + "\n"

    def set_thresholds(self, seen: dict) -> None:
        """Place each threshold between the values the probe recorded on the two sides of its
        site (``seen[k]``: (value, outcome) pairs), or MARGIN beyond them."""
        for k, site in enumerate(self.sites):
            pairs = seen.get(k)
            if not pairs:
                site.threshold = 0.0
                continue
            true = [v for v, o in pairs if o]
            false = [v for v, o in pairs if not o]
            up = site.op in ("<", "<=")  # the condition holds below the threshold
            lo_side, hi_side = (true, false) if up else (false, true)
            if lo_side and hi_side:
                lo, hi = max(lo_side), min(hi_side)
                assert hi - lo > 0.5, f"site {k}: no gap between {lo_side} and {hi_side}"
                t = (lo + hi) / 2
            elif lo_side:
                t = max(lo_side) + MARGIN
            else:
                t = min(hi_side) - MARGIN
            site.threshold = round(float(t), 4)

    def args(self):
        return (self.x.copy(), self.v.copy(), self.s, self.flag)

    def inputs_repr(self) -> str:
        return (f"x = np.array({self.x.tolist()!r})\nv = np.array({self.v.tolist()!r})\n"
                f"s = {self.s!r}\nflag = {self.flag!r}")


def fits(shape, into):
    try:
        return np.broadcast_shapes(shape, into) == tuple(into)
    except ValueError:
        return False


def bshape(a, b):
    return np.broadcast_shapes(a, b)


def size(shape):
    return int(np.prod(shape)) if shape else 1


def names_in(src):
    return set(NAME_RE.findall(src))


class Gen:
    def __init__(self, ch: Chooser, refuse: bool = False, avoid=()):
        self.ch = ch
        self.avoid = set(avoid)  # productions left out ("zip", "tuple_param"): to look past known bugs
        self.prog = Program()
        self.counter = 0
        self.helpers = []  # dicts: name, params, default, outs [(shape, bound)], kind
        self.ints = []  # integer names in scope: (name, max value)
        self.env = {}  # name -> (shape, bound, fresh)
        self.lists = {}  # name -> (element shape, element bound, length)
        self.loops = []  # enclosing loops: {"trips": n, "pinned": names updated in place}
        self.reassignable = None  # None: any non-int name; else a set of names
        self.max_depth = 3
        self.in_main = False
        self.in_if = 0
        self.refuse = refuse
        self.frozen = set()  # names that must not be bound (a closure's free variable)
        self.loop_vars = set()  # names bound by for loops so far
        # Python constructs (issue 26: comprehensions, max/min, return in a loop, statements with
        # no derivative) are drawn from a stream of their own, seeded by the program's seed, so
        # the main stream (and every other production) is what it was before they were added
        self.py = random.Random(0)
        self.made = random.Random(0)  # a local function made by a factory or kept in a table: its own stream
        # variants of a production that existed before them (an accumulator from a number, a
        # residual's squares): a stream of their own, so the main stream, and the programs of
        # the seeds the tests name, are what they were where no variant is drawn
        self.variants = random.Random(f"variants {ch.seed}" if ch.data is None else 0)
        self.guarded = 0  # inside a conditional expression's arm or a condition: no comprehension

    def tag(self, *names):
        self.prog.tags.update(names)

    # ---------------------------------------------------------------- names and sites
    def new_name(self, prefix="t"):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def site(self, value_src):
        k = len(self.prog.sites)
        self.prog.sites.append(Site(value_src, self.ch.choice([">", "<", ">=", "<="]), self.ch.bool()))
        self.tag("site")
        return f"__SITE{k}__", self.prog.sites[-1].outcome

    def mult(self):
        return int(np.prod([lp["trips"] for lp in self.loops])) if self.loops else 1

    def pinned(self):
        return set().union(*(lp["pinned"] for lp in self.loops)) if self.loops else set()

    def guard(self, e: E) -> E:
        """``e`` is about to be bound, appended or iterated over: if it may share memory with a
        name updated in place earlier in an enclosing loop body (the update runs again in the next
        iteration, while the alias lives on), bind a copy instead."""
        if not e.fresh and names_in(e.src) & self.pinned():
            return E(f"({e.src} + 0.0)", e.shape, e.bound)
        return e

    def updated_in_place(self, name):
        for lp in self.loops:
            lp["pinned"].add(name)

    # ---------------------------------------------------------------- expressions
    def log_of(self, a: E) -> E:
        """``np.log(f(a))`` for a function whose rule states the log's adjoint, its value positive."""
        self.tag("log_of")
        b = self.squash(a, 3.0)
        form = self.ch.choice(["cosh", "exp", "sqrt", "square", "reciprocal", "sin"])
        if form == "cosh":
            return E(f"np.log(np.cosh({b.src}))", a.shape, float(np.log(np.cosh(b.bound))))
        if form == "exp":
            return E(f"np.log(np.exp({b.src}))", a.shape, b.bound)
        if form == "sqrt":
            return E(f"np.log(np.sqrt(1.0 + {b.src} * {b.src}))", a.shape, float(np.log1p(b.bound**2)))
        if form == "square":
            return E(f"np.log(np.square(2.0 + np.sin({b.src})))", a.shape, 2.2)
        if form == "reciprocal":
            return E(f"np.log(np.reciprocal(1.0 + {b.src} * {b.src}))", a.shape, float(np.log1p(b.bound**2)))
        return E(f"np.log(np.sin(1.0 + 0.2 * np.tanh({b.src})))", a.shape, 0.4)

    def logistic(self, a: E) -> E:
        """``1 / (1 + exp(-a))`` in one of the ways people write it, its value in (0, 1)."""
        self.tag("logistic")
        form = self.ch.choice(["1.0 / (1.0 + np.exp(-{a}))", "1 / (np.exp(-{a}) + 1)",
                               "np.reciprocal(1.0 + np.exp(-{a}))", "np.divide(1.0, 1 + np.exp(-{a}))"])
        return E(form.format(a=f"({a.src})"), a.shape, 1.0)

    def squash(self, e: E, limit=BIG) -> E:
        if e.bound <= limit:
            return e
        fn = self.ch.choice(["np.tanh", "np.sin", "np.cos"])
        return E(f"{fn}({e.src})", e.shape, 1.0)

    def leaf(self, maxshape) -> E:
        options = []
        for name, (shape, bound, _fresh) in self.env.items():
            if fits(shape, maxshape):
                options.append(("var", name))
            for idx, sh, tag in self.index_forms(shape):
                if fits(sh, maxshape):
                    options.append(("index", name, idx, sh, tag))
            if len(shape) >= 1 and maxshape == S and "[" not in name:
                options.append(("mask", name))
        for name, (es, eb, n) in self.lists.items():
            if n >= 1:
                options += [("list", name)] * 4
        options.append(("const",))
        if self.ints:
            options.append(("int",))
        pick = self.ch.choice(options)
        if pick[0] == "var":
            shape, bound, _ = self.env[pick[1]]
            if pick[1] == "s":
                self.tag("python_float")
            return E(pick[1], shape, bound, fresh=False)
        if pick[0] == "index":
            _, name, idx, sh, tag = pick
            self.tag("index_read", tag)
            return E(f"{name}{idx}", sh, self.env[name][1], fresh=False)
        if pick[0] == "mask":
            # a boolean mask computed from the data: the selection's size depends on the values
            name = pick[1]
            shape, bound, _ = self.env[name]
            c = self.ch.choice([0.0, 0.2, -0.3])
            self.tag("index_read", "index_mask")
            return self.squash(E(f"np.sum({name}[{name} > {c}])", S, bound * size(shape)), 30.0)
        if pick[0] == "list":
            return self.list_use(pick[1], maxshape)
        if pick[0] == "int":
            name, top = self.ch.choice(self.ints)
            c = self.ch.choice([0.5, 0.25, 1.0])
            return E(f"({name} * {c})", S, top * c + 1e-9)
        c = self.ch.choice([0.5, 1.5, 2.0, -0.75, 3.0, 0.1])
        self.tag("python_float")
        return E(f"({c})" if c < 0 else repr(c), S, abs(c))

    def index_forms(self, shape):
        """(index source, result shape, tag) for reads of a value of ``shape``."""
        forms = []
        if shape == M:
            forms = [("[0]", V, "index_int"), ("[-1]", V, "index_neg"), ("[1:]", (2, 4), "index_slice"),
                     ("[:, 1]", R, "index_tuple"), ("[:, -1:]", K, "index_slice"), ("[1, 2]", S, "index_tuple"),
                     ("[:2, 1:3]", (2, 2), "index_slice"), ("[np.array([2, 0, 1])]", M, "index_intarray"),
                     ("[[1, 1, 0]]", M, "index_intarray"),
                     ("[np.array([True, False, True])]", (2, 4), "index_mask")]
            forms += [(f"[{n}]", V, "index_loop") for n, top in self.ints if top <= 2]
            forms += [(f"[:, {n}]", R, "index_loop") for n, top in self.ints if top <= 3]
        elif shape == V:
            forms = [("[0]", S, "index_int"), ("[1:]", (3,), "index_slice"), ("[-1]", S, "index_neg"),
                     ("[::2]", (2,), "index_slice"), ("[np.array([3, 0, 1, 1])]", V, "index_intarray"),
                     ("[np.array([True, False, True, True])]", (3,), "index_mask"),
                     ("[None, :]", (1, 4), "index_none")]
            forms += [(f"[{n}]", S, "index_loop") for n, top in self.ints if top <= 3]
        elif shape == R:
            forms = [("[0]", S, "index_int"), ("[1:]", (2,), "index_slice"), ("[:, None]", K, "index_none"),
                     ("[-2]", S, "index_neg")]
        elif shape == K:
            forms = [("[:, 0]", R, "index_tuple"), ("[0]", (1,), "index_int")]
        elif len(shape) >= 1:
            forms = [("[0]", shape[1:], "index_int")]
        return forms

    def list_use(self, name, maxshape) -> E:
        es, eb, n = self.lists[name]
        forms = ["index", "sum", "stack", "array"]
        if len(es) >= 1:
            forms.append("concatenate")
        if any(top <= n - 1 for _, top in self.ints):
            forms.append("loop_index")
        form = self.ch.choice(forms)
        if form == "index":
            k = self.ch.int(-n, n - 1)
            self.tag("list_index")
            e = E(f"{name}[{k}]", es, eb, fresh=False)
        elif form == "loop_index":
            i = self.ch.choice([i for i, top in self.ints if top <= n - 1])
            self.tag("list_index")
            e = E(f"{name}[{i}]", es, eb, fresh=False)
        elif form == "sum":
            self.tag("sum_list")
            e = self.squash(E(f"sum({self.comprehended(name, n, generator=True)})", es, eb * n), 30.0)
        elif form == "concatenate":
            self.tag("np_concatenate")
            whole = (n * es[0],) + es[1:]
            if fits(whole, maxshape) and self.ch.bool():
                e = E(f"np.concatenate({name})", whole, eb)
            else:
                e = E(f"np.concatenate({name})[-{es[0]}:]", es, eb, fresh=False)
        else:
            fn = "np.stack" if form == "stack" else "np.array"
            self.tag("np_stack" if form == "stack" else "np_array_list")
            whole = (n,) + es
            listed = self.comprehended(name, n)
            if fits(whole, maxshape) and self.ch.bool():
                e = E(f"{fn}({listed})", whole, eb)
            else:
                red = self.ch.choice(["sum", "mean"])
                e = self.squash(E(f"np.{red}({fn}({listed}), axis=0)", es, eb * (n if red == "sum" else 1)), 30.0)
        if form in ("index", "loop_index") and es == S and self.py.random() < 0.8:
            # numbers: the one at that place in the order of their values
            self.tag("builtin_sorted")
            e = E(e.src.replace(name, f"sorted({name}{', reverse=True' if self.py.random() < 0.3 else ''})", 1),
                  es, eb, fresh=False)
        if not fits(e.shape, maxshape):  # an element wider than wanted: reduce it
            e = self.squash(E(f"np.sum({e.src})", S, e.bound * size(e.shape)), 30.0)
        return e

    def comprehended(self, name, n, generator=False):
        """The list ``name`` as written, or (side stream) as a list comprehension or generator
        expression giving the same items: over the list, over ``range(n)`` indexing it, with an
        ``if`` that keeps every item, or with a comprehension inside. None in a conditional
        expression's arm or a condition (evaluated only sometimes: refused)."""
        if self.guarded or self.py.random() < 0.6:
            return name
        form = self.py.choice(["items", "range", "if", "nested"])
        if form == "items":
            inner = f"w * 1.0 for w in {name}"
        elif form == "range":
            inner = f"{name}[i] for i in range({n})"
        elif form == "if":
            inner = f"w for k, w in enumerate({name}) if k >= 0"
        else:
            inner = f"sum([u for u in [w, 0.0 * w]]) for w in {name}"
        self.tag("generator_expr" if generator else "list_comprehension", f"comprehension_{form}")
        return f"({inner})" if generator and self.py.random() < 0.5 else \
            (inner if generator else f"[{inner}]")

    def expr(self, maxshape, depth) -> E:
        if depth <= 0:
            return self.leaf(maxshape)
        kinds = ["leaf", "binop", "binop", "binop", "div", "pow", "neg", "unary", "unary", "unary",
                 "reduce", "maximum", "rule", "rule"]
        if self.helpers:
            kinds += ["call", "call"]
        if depth >= 2:
            kinds.append("ifexp")
        kind = self.ch.choice(kinds)
        d = depth - 1
        if depth >= 3:
            self.tag("nested_expr")
        if kind == "leaf":
            return self.leaf(maxshape)
        if kind == "binop":
            op = self.ch.choice(["+", "-", "*"])
            a = self.expr(maxshape, d)
            b = self.expr(maxshape, d)
            self.tag({"+": "add", "-": "sub", "*": "mul"}[op])
            if a.shape != b.shape:
                self.tag("broadcast")
            if op == "*":
                a, b = self.squash(a), self.squash(b)
                bound = a.bound * b.bound
            else:
                bound = a.bound + b.bound
            return E(f"({a.src} {op} {b.src})", bshape(a.shape, b.shape), bound)
        if kind == "div":
            a = self.squash(self.expr(maxshape, d))
            b = self.squash(self.expr(maxshape, d))
            form = self.ch.choice(["(1.0 + {b} * {b})", "(2.0 + np.cos({b}))", "(1.5 + np.tanh({b}))",
                                   "3.0"])
            den = form.format(b=b.src)
            shape = a.shape if form == "3.0" else bshape(a.shape, b.shape)
            self.tag("div")
            return E(f"({a.src} / {den})", shape, a.bound * 2.0)
        if kind == "pow":
            a = self.expr(maxshape, d)
            form = self.ch.choice(["int", "int", "float", "neg"])
            self.tag("pow")
            if form == "int":
                a = self.squash(a, 2.5)
                n = self.ch.choice([2, 3, 2.0])
                return E(f"({a.src} ** {n})", a.shape, a.bound ** n)
            a = self.squash(a, 3.0)
            p = self.ch.choice([0.5, 1.5]) if form == "float" else self.ch.choice([-1, -0.5, -2])
            return E(f"((1.0 + {a.src} * {a.src}) ** {p})", a.shape,
                     (1.0 + a.bound**2) ** p if p > 0 else 1.0)
        if kind == "neg":
            a = self.expr(maxshape, d)
            self.tag("neg")
            return E(f"(-{a.src})", a.shape, a.bound)
        if kind == "unary":
            a = self.expr(maxshape, d)
            fn = self.ch.choice(["sin", "cos", "tanh", "exp", "log", "sqrt", "abs", "log_of", "logistic"])
            self.tag("elementwise")
            if fn == "log_of":  # the log of one function's value (differentiate/compositions.py)
                return self.log_of(a)
            if fn == "logistic":  # the logistic function spelled out (differentiate/compositions.py)
                return self.logistic(a)
            if fn in ("sin", "cos", "tanh"):
                return E(f"np.{fn}({a.src})", a.shape, 1.0)
            if fn == "exp":
                a = self.squash(a, 2.0)
                return E(f"np.exp({a.src})", a.shape, float(np.exp(a.bound)))
            if fn == "log":
                a = self.squash(a, 10.0)
                return E(f"np.log(1.0 + {a.src} * {a.src})", a.shape, float(np.log1p(a.bound**2)))
            if fn == "sqrt":
                a = self.squash(a, 10.0)
                return E(f"np.sqrt(1.0 + {a.src} * {a.src})", a.shape, float(np.sqrt(1 + a.bound**2)))
            # abs: a kink at 0 only; random inputs never sit within a finite-difference step of it
            self.tag("abs")
            return E(f"{self.ch.choice(['abs', 'np.abs'])}({a.src})", a.shape, a.bound)
        if kind == "reduce":
            a = self.expr(M, d)
            fn = self.ch.choice(["sum", "mean"])
            options = [("", S)]
            if len(a.shape) == 2:
                options += [(", axis=0", (a.shape[1],)), (", axis=1", (a.shape[0],)),
                            (", axis=-1", (a.shape[0],)), (", axis=1, keepdims=True", (a.shape[0], 1)),
                            (", axis=0, keepdims=True", (1, a.shape[1]))]
            elif len(a.shape) == 1:
                options += [(", axis=0", S)]
            options = [o for o in options if fits(o[1], maxshape)]
            kw, shape = self.ch.choice(options)
            self.tag("reduce")
            if "axis" in kw:
                self.tag("reduce_axis")
            if "keepdims" in kw:
                self.tag("keepdims")
            bound = a.bound * (size(a.shape) // max(size(shape), 1) if fn == "sum" else 1)
            item = ""
            if shape == S and self.py.random() < 0.25:  # a Python number (the twin drops it)
                item = ".item()"
                self.tag("item")
            return self.squash(E(f"np.{fn}({a.src}{kw}){item}", shape, bound), 30.0)
        if kind == "maximum":
            a = self.expr(maxshape, d)
            c = self.ch.choice([0.3, -0.2, 0.05, 1.2])
            fn = self.ch.choice(["maximum", "minimum"])
            order = self.ch.bool()
            args = f"{a.src}, {c}" if order else f"{c}, {a.src}"
            self.tag("elementwise")
            if a.shape == S and self.py.random() < 0.5:  # Python's max/min of numbers
                more = f", {-c}" if self.py.random() < 0.4 else ""
                self.tag(f"builtin_{fn[:3]}")
                return E(f"{fn[:3]}({args}{more})", a.shape, max(a.bound, abs(c)), fresh=False)
            return E(f"np.{fn}({args})", a.shape, max(a.bound, abs(c)))
        if kind == "rule":
            return self.rule(maxshape, d)
        if kind == "call":
            return self.call(maxshape, d)
        # conditional expression: both arms must be valid code, only the taken one runs
        cond, outcome = self.condition(d)
        self.guarded += 1
        a = self.expr(maxshape, d)
        b = self.expr(maxshape, d)
        self.guarded -= 1
        taken = a if outcome else b
        self.tag("ifexp")
        return E(f"({a.src} if {cond} else {b.src})", taken.shape, taken.bound, fresh=False)

    def rule(self, maxshape, d) -> E:
        """A call of one of the other rule families (products, scans, shapes, joins, linalg,
        scipy.special, math, ndarray methods, zero-derivative functions), fitted to maxshape."""
        arg = lambda shape, bound=1.0: self.fit_arg(shape, max(d, 0), bound)  # noqa: E731
        a33 = lambda: f"(2.0 * np.eye(3) + 0.3 * {arg(M)}[:, :3])"  # noqa: E731 - well conditioned
        forms = [
            ("matmul", R, lambda: E(f"({arg(M)} @ {arg(V)})", R, 4.0)),
            ("matmul", V, lambda: E(f"({arg(R)} @ {arg(M)})", V, 3.0)),
            ("matmul", S, lambda: self._matmul_number(arg)),
            ("rule_dot", R, lambda: E(f"np.dot({arg(M)}, {arg(V)})", R, 4.0)),
            ("rule_einsum", R, lambda: E(f'np.einsum("ij,j->i", {arg(M)}, {arg(V)})', R, 4.0)),
            ("rule_einsum", V, lambda: E(f'np.einsum("ij,ij->j", {arg(M)}, {arg(M)})', V, 3.0)),
            # matrix products spelled as einsums (code made for shapes writes them as products)
            ("rule_einsum_product", V, lambda: E(f'np.einsum("i,ij->j", {arg(R)}, {arg(M)})', V, 3.0)),
            ("rule_einsum_product", M, lambda: E(f'np.einsum("ki,kj->ij", {arg((4, 3))}, {arg((4, 4))})',
                                                 M, 4.0)),
            ("rule_einsum_product", S, lambda: E(f'np.einsum("j,j", {arg(V)}, {arg(V)})', S, 4.0)),
            ("rule_einsum_ellipsis", R, lambda: E(f'np.einsum("...j,j->...", {arg(M)}, {arg(V)})', R, 4.0)),
            ("rule_einsum_repeated", S, lambda: E(f'np.einsum("ii->", {arg(M)}[:, :3])', S, 3.0)),
            ("rule_tensordot", S, lambda: E(f"np.tensordot({arg(M)}, {arg(M)}, axes=2)", S, 12.0)),
            ("rule_outer", M, lambda: E(f"np.outer({arg(R)}, {arg(V)})", M, 1.0)),
            ("rule_cumsum", V, lambda: E(f"np.cumsum({arg(V)})", V, 4.0)),
            ("rule_cumsum", M, lambda: E(f"np.cumsum({arg(M)}, axis=1)", M, 4.0)),
            ("rule_shapes", M, lambda: E(f"np.reshape({arg(M)}, (4, 3)).T", M, 1.0)),
            ("rule_shapes", K, lambda: E(f"np.expand_dims({arg(R)}, 1)", K, 1.0)),
            ("rule_shapes", R, lambda: E(f"np.squeeze({arg(K)}, axis=1)", R, 1.0)),
            ("rule_shapes", M, lambda: E(f"np.transpose({arg((4, 3))})", M, 1.0)),
            ("rule_joins", V, lambda: E(f"np.concatenate([{arg(V)}, {arg(R)}])[2:6]", V, 1.0)),
            ("rule_joins", M, lambda: E(f"np.stack([{arg(R)}, {arg(R)}, {arg(R)}, {arg(R)}], axis=1)", M, 1.0)),
            # a list or tuple display of numbers as an elementwise function's operand (an array;
            # the twin spells it np.array(...): autograd cannot take a list of its boxes)
            ("rule_joins", V, lambda: E(f"(np.multiply(__DISPLAY__([{arg(S)}, {arg(S)}, {arg(S)}, {arg(S)}]), "
                                        f"{arg(S)}) * {arg(S)})", V, 1.0)),
            ("rule_joins", R, lambda: E(f"np.add(__DISPLAY__(({arg(S)}, {arg(S)}, {arg(S)})), {arg(R)})",
                                        R, 2.0)),
            ("linalg_det", S, lambda: E(f"np.linalg.det({a33()})", S, 25.0)),
            ("linalg_inv", R, lambda: E(f"(np.linalg.inv({a33()}) @ {arg(R)})", R, 3.0)),
            ("linalg_solve", R, lambda: E(f"np.linalg.solve({a33()}, {arg(R)})", R, 3.0)),
            ("linalg_norm", S, lambda: E(f"np.linalg.norm({arg(V)})", S, 2.0)),
            # a norm's square, read as the sum of |v|^2 (differentiate/compositions.py)
            ("norm_squared", S, lambda: E(f"np.linalg.norm({arg(V)}) ** 2", S, 4.0)),
            ("norm_squared", S, lambda: E(f"np.square(np.linalg.norm({arg(M)}))", S, 12.0)),
            ("linalg_cholesky", R, lambda: self._cholesky(a33())),
            ("linalg_shared", R, lambda: self._shared_inverse(arg)),
            ("special_expit", maxshape, lambda: self._elementwise("special.expit", maxshape, d)),
            ("special_erf", maxshape, lambda: self._elementwise("special.erf", maxshape, d)),
            ("special_logsumexp", R, lambda: E(f"special.logsumexp({arg(M)}, axis=1)", R, 2.5)),
            ("math", S, lambda: self._math(d)),
            ("methods", S, lambda: E(f"{arg(M)}.sum()", S, 12.0)),
            ("methods", V, lambda: E(f"{arg(M)}.mean(axis=0)", V, 1.0)),
            ("methods", M, lambda: E(f"{arg((4, 3))}.T", M, 1.0, fresh=False)),
            ("methods", V, lambda: E(f"{arg(M)}.reshape(12)[3:7]", V, 1.0, fresh=False)),
            ("methods", R, lambda: self._global_dot(arg(V))),
            ("nondiff_floor", maxshape, lambda: self._floor(maxshape, d)),
            ("nondiff_argmax", S, lambda: E(f"np.argmax({arg(V)})", S, 3.0)),
            ("nondiff_compare", maxshape, lambda: self._compare(maxshape, d)),
            ("nondiff_zeros_like", maxshape, lambda: self._zeros_like(maxshape, d)),
            ("nondiff_shape", S, lambda: E(f"{arg(M)}.shape[1]", S, 4.0)),
            # arrays made from lengths read off shapes (known shapes where made for a signature)
            ("nondiff_made", M, lambda: E(f"(np.zeros(({arg(R)}.shape[0], len({arg(V)}))) + "
                                          f"{arg(R)}[:, None] * {arg(V)}[None, :])", M, 1.0)),
            ("nondiff_made", M, lambda: E(f"(np.eye(len({arg(R)}), M={arg(M)}.shape[1]) * {arg(M)})",
                                          M, 1.0)),
            ("nondiff_random", M, lambda: E("np.random.default_rng(7).uniform(-1.0, 1.0, size=(3, 4))", M, 1.0)),
        ]
        # a (3,) result also serves a (3, 1) slot (so a (3, 4) one) as a column
        column = lambda shape: shape == R and not fits(R, maxshape) and fits(K, maxshape)  # noqa: E731
        forms = [f for f in forms if fits(f[1], maxshape) or column(f[1])]
        tag = self.ch.choice(sorted({f[0] for f in forms}))  # each family equally often
        tag, shape, build = self.ch.choice([f for f in forms if f[0] == tag])
        e = build()
        if column(e.shape):
            e = E(f"{e.src}[:, None]", K, e.bound, fresh=False)
        self.tag("rule", tag)
        if tag.startswith("special"):
            self.prog.imports.add("special")
        if tag == "math":
            self.prog.imports.add("math")
        return self.squash(e, 30.0)

    def _matmul_number(self, arg):
        """``v @ v``, or (a variant) a residual's squares against data, whose adjoint (a number
        times the residual) a product with a smaller result only reads (differentiate/scales.py)."""
        if self.variants.random() >= 0.3:
            return E(f"({arg(V)} @ {arg(V)})", S, 4.0)
        self.tag("matmul_residual")
        if self.variants.random() < 0.5:
            return E(f"np.sum(({arg(R)} @ np.linspace(-0.5, 0.5, 12).reshape(3, 4) - 0.25) ** 2)", S, 13.0)
        return E(f"np.mean(np.square(np.dot({arg(R)}, np.linspace(-0.5, 0.5, 12).reshape(3, 4)) - "
                 "np.linspace(0.0, 0.3, 4)))", S, 4.0)

    def _global_dot(self, v):
        """A method of a module-level array (``GM.dot(v)``): an array method where the value is
        seen (the twin spells it ``np.dot(GM, v)``: autograd cannot trace the method)."""
        self.prog.imports.add("garray")
        self.tag("global_methods")
        return E(f"GM.dot({v})", R, 4.0)

    def _cholesky(self, a33):
        return E(f"np.sum(np.linalg.cholesky({a33} @ {a33}.T), axis=1)", R, 9.0)

    def _shared_inverse(self, arg):
        """One matrix whose inverse three adjoints read (solves with it and with its transpose,
        its log-determinant), written three times: the lowering computes it once
        (lower/common.py: of a name where one holds a (3, 4) value, its diagonal a global,
        ``np.eye`` calls and the like being kept apart), and the code made for the shapes its
        inverse once (differentiate/inverses.py)."""
        self.prog.imports.add("geye")
        names = sorted(n for n, (shape, _, _) in self.env.items() if shape == M and "[" not in n)
        a33 = f"(GEYE + 0.3 * np.tanh({self.ch.choice(names) if names else arg(M)}[:, :3]))"
        return E(f"(np.linalg.solve({a33}, {arg(R)}) + np.linalg.solve({a33}.T, {arg(R)}) + "
                 f"np.linalg.slogdet({a33})[1])", R, 9.0)

    def _elementwise(self, fn, maxshape, d):
        a = self.squash(self.expr(maxshape, d), 10.0)
        return E(f"{fn}({a.src})", a.shape, 1.0)

    def _math(self, d):
        a = self.squash(self.expr(S, d), 2.0)
        fn = self.ch.choice(["sin", "cos", "tanh", "exp"])
        return E(f"math.{fn}({a.src})", S, float(np.exp(a.bound)) if fn == "exp" else 1.0)

    def _floor(self, maxshape, d):
        a = self.expr(maxshape, d)
        b = self.squash(self.expr(maxshape, d))
        return E(f"(np.floor({a.src}) * {b.src})", bshape(a.shape, b.shape), (a.bound + 1.0) * b.bound)

    def _compare(self, maxshape, d):
        a = self.expr(maxshape, d)
        b = self.squash(self.expr(maxshape, d))
        return E(f"(({a.src} > 0.2) * {b.src})", bshape(a.shape, b.shape), b.bound)

    def _zeros_like(self, maxshape, d):
        a = self.expr(maxshape, d)
        return E(f"(np.zeros_like({a.src}) + 1.5)", a.shape, 1.5)

    def condition(self, depth, nest=0):
        """A condition source and the outcome it is drawn to have."""
        self.guarded += 1
        try:
            return self._condition(depth, nest)
        finally:
            self.guarded -= 1

    def _condition(self, depth, nest=0):
        forms = ["sum", "mean", "scalar", "max"]
        if self.in_main:
            forms.append("flag")
        if nest == 0:
            forms += ["and", "or", "not"]
        form = self.ch.choice(forms)
        if form == "flag":
            return ("flag", self.prog.flag) if self.ch.bool() else ("not flag", not self.prog.flag)
        if form in ("and", "or", "not"):
            self.tag(form)
            inner, out = self.condition(depth, nest + 1)
            if form == "not":
                return f"not ({inner})", not out
            other, out2 = self.condition(depth, nest + 1)
            if form == "and":
                return f"({inner}) and ({other})", out and out2
            return f"({inner}) or ({other})", out or out2
        a = self.expr(S if form == "scalar" else M, max(depth, 1))
        if form == "scalar":
            value = a.src
        elif form == "max":
            value = f"np.max({a.src})"
        else:
            value = f"np.{form}({a.src})"
        return self.site(value)

    def fit_arg(self, shape, depth, bound=2.0) -> str:
        """An argument of exactly ``shape`` with |value| <= bound."""
        a = self.squash(self.expr(shape, depth), bound)
        if a.shape != shape:
            if len(shape) == 0:
                return f"np.mean({a.src})"
            return f"({a.src} + np.zeros({shape[0] if len(shape) == 1 else shape}))"
        return a.src

    def call_args(self, h, depth):
        args = []
        for pname, pshape in h["params"]:
            if pshape and pshape[0] == "tuple":
                self.tag("call_tuple_arg")
                args.append(f"({self.fit_arg(pshape[1], depth)}, {self.fit_arg(pshape[2], depth)})")
            else:
                args.append(self.fit_arg(pshape, depth))
        if h["default"]:
            how = self.ch.choice(["omit", "keyword", "positional"])
            c = self.squash(self.expr(S, depth), 1.0).src
            if how == "keyword":
                args.append(f"c={c}")
                self.tag("call_kw")
            elif how == "positional":
                args.append(c)
            else:
                self.tag("call_default")
        if len(h["params"]) >= 2 and "=" not in args[-1] and self.ch.bool(30):
            args[1] = f"{h['params'][1][0]}={args[1]}"
            args = args[:2] + [a if "=" in a else f"c={a}" for a in args[2:]]
            self.tag("call_kw")
        self.tag("call", f"call_{h['kind']}")
        if self.loops:
            self.tag("call_in_loop")
        if self.in_if:
            self.tag("call_in_branch")
        return f"{h['name']}({', '.join(args)})"

    def call(self, maxshape, depth) -> E:
        options = [(h, k) for h in self.helpers for k, (shape, _) in enumerate(h["outs"])
                   if fits(shape, maxshape)]
        if not options:
            return self.leaf(maxshape)
        h, k = self.ch.choice(options)
        src = self.call_args(h, depth)
        shape, bound = h["outs"][k]
        if len(h["outs"]) > 1:
            self.tag("call_index_result")
            src = f"{src}[{k}]"
        return E(src, shape, bound, fresh=False)

    # ---------------------------------------------------------------- statements
    def targets(self):
        names = [n for n in self.env if n not in ("flag",) and "[" not in n and n not in self.frozen]
        if self.reassignable is not None:
            names = [n for n in names if n in self.reassignable]
        return names

    def unfresh(self, e: E):
        """``e`` may be (a view of) a name it mentions: no ``+=`` on those names any more, as
        numpy would then change both."""
        if not e.fresh:
            for name in names_in(e.src):
                if name in self.env:
                    shape, bound, _ = self.env[name]
                    self.env[name] = (shape, bound, False)

    def bind(self, name, e: E):
        self.unfresh(e)
        self.env[name] = (e.shape, e.bound, e.fresh)
        if self.reassignable is not None:
            self.reassignable.add(name)

    def assign(self, lines, ind, name, e: E):
        e = self.guard(e)
        lines.append(f"{ind}{name} = {e.src}")
        self.bind(name, e)

    def length_made(self, lines, ind, src):
        """``n = len(x)`` (or ``x.shape[0]``), then ``x[:n]`` and an array made from ``n`` (and
        ``x.shape[1]``): known shapes where the code is made for a shape signature. Or lengths
        computed from lengths: windows ``x[k:k + m]`` of ``m = n - K + 1`` added up in a loop
        (length_window), ``x``'s ends joined to a function of its inside (length_joined)."""
        shape, bound, _ = self.env[src]
        form = self.ch.choice(["made", "made", "window", "joined", "running", "sums"])
        if form == "running":
            return self.length_running(lines, ind, src)
        if form == "sums" and len(shape) <= 2 and ind == "    ":  # (in the function's body)
            return self.length_sums(lines, ind, src)
        if form == "window" and len(shape) <= 2:
            if shape[0] >= 2 and self.ch.bool(40):
                return self.length_tail(lines, ind, src)
            return self.length_window(lines, ind, src)
        if form == "joined" and shape[0] >= 2:
            return self.length_joined(lines, ind, src)
        n, name = self.new_name("n"), self.new_name("y")
        lines.append(f"{ind}{n} = " + self.ch.choice([f"len({src})", f"{src}.shape[0]"]))
        made = n if len(shape) == 1 else f"({n}, {src}.shape[1])" if len(shape) == 2 else f"{src}.shape"
        maker = self.ch.choice([f"np.zeros({made})", f"np.ones({made}) * 0.5"])
        self.assign(lines, ind, name, E(f"({src}[:{n}] + {maker})", shape, bound + 0.5))
        self.tag("length_made")

    def length_running(self, lines, ind, src):
        """A running product or sum of the rows of a function of ``src`` (each row's new value
        appended to a list then stacked, or written into its row of an array; over
        ``range(len(z))``, ``range(z.shape[0])`` or the rows themselves), which code made for a
        shape signature computes as one scan (lower/scans.py); the acc read after the loop
        sometimes (a loop kept as written)."""
        shape, _, _ = self.env[src]
        z, acc, name = self.new_name("z"), self.new_name("acc"), self.new_name("y")
        op = self.ch.choice(["*", "+"])
        lines.append(f"{ind}{z} = np.tanh({src}) * 0.9")
        start = self.ch.choice([f"np.ones({z}.shape[1:])" if op == "*" else f"np.zeros({z}.shape[1:])",
                                f"0.5 + 0.25 * np.cos({z}[0])"])
        lines.append(f"{ind}{acc} = {start}")
        t = self.new_name("t")
        header = self.ch.choice([f"for {t} in range(len({z})):", f"for {t} in range({z}.shape[0]):", "rows"])
        row = f"{z}[{t}]"
        if header == "rows":
            header, row = f"for {t} in {z}:", t
        step = self.ch.choice([f"{acc} {op} {row}", f"{row} {op} {acc}"])
        if self.ch.bool() and row != t:
            lines.append(f"{ind}{name} = np.zeros_like({z})")
            lines += [f"{ind}{header}", f"{ind}    {acc} = {step}", f"{ind}    {name}[{t}] = {acc}"]
            self.prog.autograd = False  # (autograd writes no traced value into an array)
        else:
            rows = self.new_name("rows")
            lines += [f"{ind}{rows} = []", f"{ind}{header}", f"{ind}    {acc} = {step}",
                      f"{ind}    {rows}.append({acc})"]
            lines.append(f"{ind}{name} = " + self.ch.choice([f"np.stack({rows})", f"np.array({rows})"]))
        bound = 1.0 if op == "*" else 1.0 + 0.9 * shape[0]
        if self.ch.bool(25):
            lines.append(f"{ind}{name} = {name} + 0.5 * {acc}")  # acc read after: kept
            bound += 1.0 if op == "*" else 1.0 + 0.9 * shape[0]
        self.bind(name, E(name, shape, bound, fresh=False))
        self.tag("running_scan")

    def length_joined(self, lines, ind, src):
        """``src``'s parts joined with functions of its other parts (a functional update, which
        code made for a shape signature writes as an index write: lower/splices.py): its inside
        replaced, its head or its tail, in a loop of a few steps too; or its parts joined in
        another order (a join as written)."""
        shape, bound, _ = self.env[src]
        name = self.new_name("y")
        bound = max(bound, 1.0)
        form = self.ch.choice(["inside", "head", "tail", "steps", "rolled"])
        if form == "steps":
            lines.append(f"{ind}{name} = {src}")
            lines.append(f"{ind}for _ in range({self.ch.int(1, 3)}):")
            lines.append(f"{ind}    {name} = np.concatenate([{name}[:1], 0.5 * ({name}[1:-1] + "
                         f"np.sin({name}[2:])), {name}[-1:]])")
            self.bind(name, E(name, shape, bound, fresh=False))
            self.tag("length_joined")
            return
        joined = {
            "inside": f"np.concatenate([{src}[:1], np.sin({src}[1:-1]) * 0.5, {src}[-1:]])",
            "head": f"np.concatenate(({src}[:2] * 0.5, {src}[2:]))",
            "tail": f"np.concatenate([{src}[:-1], np.cos({src}[-1:])])",
            "rolled": f"np.concatenate([{src}[1:], {src}[:1]])",
        }[form]
        self.assign(lines, ind, name, E(joined, shape, bound))
        self.tag("length_joined")

    def length_window(self, lines, ind, src):
        """``m = n - K + 1`` windows of ``src`` (``K`` of them, ``x[k:k + m]``) added into an
        array made from ``m`` (so ``m`` is known to be 0 or more where the windows are read)."""
        shape, bound, _ = self.env[src]
        K = self.ch.int(1, shape[0])
        n, m, k, name = self.new_name("n"), self.new_name("m"), self.new_name("k"), self.new_name("y")
        lines.append(f"{ind}{n} = " + self.ch.choice([f"len({src})", f"{src}.shape[0]"]))
        lines.append(f"{ind}{m} = " + self.ch.choice([f"{n} - {K} + 1", f"{n} + 1 - {K}"]))
        made = m if len(shape) == 1 else f"({m}, {src}.shape[1])"
        if self.variants.random() < 0.4:  # a number the first step's window broadcasts up
            lines.append(f"{ind}{name} = " + self.variants.choice(["0.0", "0"]))
            self.tag("length_window_number")
        else:
            lines.append(f"{ind}{name} = np.zeros({made})")
        lines.append(f"{ind}for {k} in range({K}):")
        window = self.ch.choice([f"{src}[{k}:{k} + {m}]", f"{src}[{k}:{m} + {k}]"])
        lines.append(f"{ind}    {name} = " + self.variants.choice([f"{name} + 0.5 * {window}",
                                                                   f"0.5 * np.sin({window}) + {name}"]))
        self.bind(name, E(name, (shape[0] - K + 1,) + shape[1:], 0.5 * K * bound, fresh=False))
        self.tag("length_window")

    def length_sums(self, lines, ind, src):
        """Sums over a loop's steps of functions of ``src``'s row at the counter and its tail
        after it (``src[k + j:]``, over ``range(n - j)``: no tail empty), a sum of one or two
        accumulators, a value made from neither computed in the step too; which code made for
        a shape signature computes batched where the loop is in the function's own body
        (lower/batched_loops.py)."""
        shape, bound, _ = self.env[src]
        j = self.ch.int(0, min(2, shape[0] - 1))
        n, k, d, acc = self.new_name("n"), self.new_name("k"), self.new_name("d"), self.new_name("acc")
        lines.append(f"{ind}{n} = " + self.ch.choice([f"len({src})", f"{src}.shape[0]"]))
        lines.append(f"{ind}{acc} = " + self.ch.choice(["0.0", f"0.5 * np.sum({src}[0])"]))
        second = self.new_name("acc") if self.ch.bool(40) else None
        if second:
            lines.append(f"{ind}{second} = 0.0")
        count = f"{n} - {j}" if j else self.ch.choice([n, f"{n} - 0"])
        row, tail = f"{src}[{k}]", f"{src}[{k} + {j}:]" if j else f"{src}[{k}:]"
        weights = None
        if len(shape) == 2 and self.ch.bool(40):  # a product of the row and a matrix made before
            weights = self.new_name("m")
            lines.append(f"{ind}{weights} = np.linspace(-0.5, 0.5, {shape[1] * 2}).reshape({shape[1]}, 2)")
        if not j and self.ch.bool(40):  # over the rows themselves, the counter from enumerate
            row = self.new_name("row")
            lines.append(f"{ind}for {k}, {row} in enumerate({src}):")
            self.tag("length_sums_rows")
        else:
            lines.append(f"{ind}for {k} in range({count}):")
        inner = f"{ind}    "
        if self.ch.bool(30):
            fixed = self.new_name("c")
            lines.append(f"{inner}{fixed} = 0.5 * np.cos({src}[0])")
            row_term = f"({row} + {fixed})"
        else:
            row_term = row
        lines.append(f"{inner}{d} = " + self.ch.choice([f"np.sin({tail} - {row_term})", f"{tail} * {row_term}",
                                                         f"np.cos({tail}) + 0.5 * {row_term}"]))
        if len(shape) == 2 and self.ch.bool():
            total = self.ch.choice([f"np.sum(np.sum({d} * {d}, axis=1) * 0.5)",
                                    f"np.sum(np.sum({d}, axis=0) * {row})",
                                    f"np.sum(np.mean({d} * {d}, axis=-1))"])
        else:
            total = self.ch.choice([f"np.sum({d} * {tail})", f"np.sum({d})", f"{d}.sum() * 0.5"])
        lines.append(f"{inner}{acc} = " + self.ch.choice([f"{acc} + 0.5 * {total}", f"{acc} - {total} * 0.25",
                                                           f"0.3 * {total} + {acc}"]))
        if second:
            lines.append(f"{inner}{second} = {second} + np.sum(np.tanh({row}) * {row})")
        if weights:
            lines.append(f"{inner}{acc} = {acc} + np.sum(np.tanh({row} @ {weights})) * 0.5")
            self.tag("length_sums_product")
        name = self.new_name("y")
        lines.append(f"{ind}{name} = {acc} + 0.5 * {second}" if second else f"{ind}{name} = {acc}")
        size = 1
        for dim in shape:
            size *= dim
        self.bind(name, E(name, (), 2.0 * (bound + 1.0) ** 2 * size * shape[0], fresh=False))
        self.tag("length_sums")

    def length_tail(self, lines, ind, src):
        """``src``'s rows after (or up to) the loop's counter against its row there, summed:
        ``src[k + 1:]`` is ``n - k - 1`` long, a length that changes with ``k`` (known in the
        step that reads it, where the code is made for a shape signature)."""
        shape, bound, _ = self.env[src]
        n, k, d, name = self.new_name("n"), self.new_name("k"), self.new_name("d"), self.new_name("y")
        lines.append(f"{ind}{n} = " + self.ch.choice([f"len({src})", f"{src}.shape[0]"]))
        lines.append(f"{ind}{name} = 0.0")
        lines.append(f"{ind}for {k} in range({n} - 1):")
        part = self.ch.choice([f"{src}[{k} + 1:]", f"{src}[:{k} + 1]", f"{src}[{k}:{n}]"])
        inner = f"{ind}    "
        if self.ch.bool(30):  # in a branch's arm: bound and read there, in one step
            lines.append(f"{ind}    if {k} % 2 == 0:")
            inner += "    "
        lines.append(f"{inner}{d} = np.sin({part} - {src}[{k}])")
        lines.append(f"{inner}{name} = {name} + 0.5 * np.sum({d} * {part})")
        size = 1
        for dim in shape:
            size *= dim
        self.bind(name, E(name, (), 0.5 * bound * size * shape[0], fresh=False))
        self.tag("length_tail")

    def inplace_candidates(self, arrays_only=False):
        out = []
        for n in self.targets() if not self.loops else self.env:
            if "[" in n or n == "flag" or n not in self.env:
                continue
            shape, _, fresh = self.env[n]
            if fresh and (len(shape) >= 1 or not arrays_only):
                out.append(n)
        if self.loops:  # in a loop body: body names, carried names are left to the loop
            carried = set().union(*(lp["carried"] for lp in self.loops))
            out = [n for n in out if n not in carried
                   and (n in (self.reassignable or ()) or len(self.env[n][0]) >= 1)]
            if not arrays_only:
                out = [n for n in out if n in (self.reassignable or ())]
        return out

    def statement(self, lines, ind, depth_left, top=False):
        kinds = ["assign", "assign", "reassign", "augment", "unpack", "if", "index_write", "alias",
                 "copy_augment", "write_call"]
        if any(len(h["outs"]) > 1 for h in self.helpers):
            kinds.append("call_unpack")
        if depth_left > 0:
            kinds += ["loop", "loop", "list", "container"]  # container last: the others' draws stay
        kinds.append("length")
        kind = self.ch.choice(kinds)
        if kind in ("index_write", "write_call") and "stated" in self.prog.imports:
            kind = "assign"  # autograd (a stated gradient's only oracle) cannot run index writes
        maxshape = self.ch.choice([M, M, V, V, S, K, R])
        if kind == "reassign" and self.targets():
            name = self.ch.choice(self.targets())
            self.tag("reassign")
            if self.ch.bool(30):
                self.rebind(lines, ind, name)
            else:
                self.assign(lines, ind, name, self.squash(self.expr(maxshape, self.ch.int(1, self.max_depth)), 30.0))
        elif kind == "augment" and self.inplace_candidates():
            self.augment(lines, ind, self.ch.choice(self.inplace_candidates()))
        elif kind == "unpack":
            a = self.guard(self.squash(self.expr(maxshape, self.ch.int(1, 2)), 30.0))
            b = self.guard(self.squash(self.expr(self.ch.choice([M, V, S]), self.ch.int(1, 2)), 30.0))
            n1, n2 = self.new_name(), self.new_name()
            if "_" not in self.env and not self.loops:  # a value named ``_``, read later: never
                n1 = "_"  # a generated discard target (lower/naming.Namer.discard)
                self.tag("underscore_name")
            lines.append(f"{ind}{n1}, {n2} = {a.src}, {b.src}")
            self.tag("unpack")
            for n, e in ((n1, a), (n2, b)):
                self.bind(n, e)
        elif kind == "call_unpack":
            h = self.ch.choice([h for h in self.helpers if len(h["outs"]) > 1])
            src = self.call_args(h, self.ch.int(1, 2))
            n1, n2 = self.new_name(), self.new_name()
            lines.append(f"{ind}{n1}, {n2} = {src}")
            self.tag("call_unpack", "unpack")
            self.unfresh(E(src, S, 0.0, fresh=False))
            for n, (shape, bound) in zip((n1, n2), h["outs"]):
                self.bind(n, E(n, shape, bound, fresh=False))
            if names_in(src) & self.pinned():  # the results may alias a pinned name
                lines.append(f"{ind}{n1}, {n2} = {n1} + 0.0, {n2} + 0.0")
        elif kind in ("index_write", "write_call") and self.inplace_candidates(arrays_only=True):
            write = self.write_call if kind == "write_call" else self.index_write
            write(lines, ind, self.ch.choice(self.inplace_candidates(arrays_only=True)))
        elif kind in ("index_write", "write_call") and self.arrays():  # a fresh copy to write into
            arrays = self.arrays()
            src = self.ch.choice(arrays)
            shape, bound, _ = self.env[src]
            name = self.new_name("y")
            form = self.ch.choice(["{}.copy()", "np.copy({})", "np.zeros({shape})", "{} * 1.0"])
            self.assign(lines, ind, name, E(form.format(src, shape=shape if len(shape) > 1 else shape[0]),
                                           shape, bound))
            self.tag("copy")
            (self.write_call if kind == "write_call" else self.index_write)(lines, ind, name)
        elif kind == "length" and self.arrays():
            self.length_made(lines, ind, self.ch.choice(self.arrays()))
        elif kind == "alias":
            self.alias(lines, ind, maxshape)
        elif kind == "copy_augment" and self.arrays():
            arrays = self.arrays()
            src = self.ch.choice(arrays)
            shape, bound, _ = self.env[src]
            name = self.new_name("z")
            copy = self.ch.choice(["{}.copy()", "np.copy({})"]).format(src)
            self.assign(lines, ind, name, E(copy, shape, bound))
            self.tag("copy_augment", "copy")
            self.augment(lines, ind, name)
        elif kind == "if":
            self.if_statement(lines, ind, depth_left)
        elif kind == "loop":
            self.loop_statement(lines, ind, depth_left)
        elif kind == "list":
            self.list_statement(lines, ind, depth_left)
        elif kind == "container":
            self.container_statement(lines, ind)
        else:
            self.tag("assign")
            e = self.squash(self.expr(maxshape, self.ch.int(1, self.max_depth)), 30.0)
            if self.py.random() < 0.12:  # side stream: the main stream draws the same
                self.local_function(lines, ind, self.new_name(), e)
            else:
                self.assign(lines, ind, self.new_name(), e)

    def local_function(self, lines, ind, name, e: E):
        """``name = <e>`` written as a call of a local function (a lambda bound to a name or a
        nested def) taking one name ``e`` reads as its parameter and closing over the others."""
        e = self.guard(e)
        fn = self.new_name("fn")
        read = sorted(n for n in names_in(e.src) if n in self.env)
        arg = self.py.choice(read) if read else "0.0"
        param = f"{fn}_in"
        body = re.sub(rf"(?<![.\w]){arg}\b", param, e.src) if read else e.src
        if self.py.random() < 0.5:
            lines.append(f"{ind}{fn} = lambda {param}: {body}  # noqa: E731")
            self.tag("local_lambda")
        else:
            lines.append(f"{ind}def {fn}({param}):")
            lines.append(f"{ind}    return {body}")
            self.tag("local_def")
        lines.append(f"{ind}{name} = {self.made_function(lines, ind, fn)}({arg})")
        # a call's result (of a factory's lambda, a table's entry) may be an array the callee
        # shares, as s2sgrad takes it: not written into in place (seed 448)
        self.bind(name, replace(e, fresh=False))

    def made_function(self, lines, ind, fn) -> str:
        """(own stream) How the local function ``fn`` is called: itself, or what a factory made
        from it (``make_fn(1.0)``: a def returning a lambda scaled by its parameter), or an entry
        of a list or dict holding it, by a constant key; returns the callee's expression."""
        form = self.made.choice(["plain", "plain", "factory", "table"])
        if form == "plain":
            return fn
        if form == "factory":
            lines.append(f"{ind}def make_{fn}(scale):")
            lines.append(f"{ind}    return lambda z: {fn}(z) * scale")
            lines.append(f"{ind}{fn}_made = make_{fn}(1.0)")
            self.tag("local_factory")
            return f"{fn}_made"
        if self.made.random() < 0.5:
            lines.append(f"{ind}{fn}_table = [{fn}, lambda z: {fn}(z)]")
            self.tag("local_table")
            return f"{fn}_table[{self.made.choice([0, 1, -1])}]"
        lines.append(f"{ind}{fn}_table = {{'f': {fn}, 'g': lambda z: {fn}(z)}}")
        self.tag("local_table")
        return f"{fn}_table[{self.made.choice(['f', 'g'])!r}]"

    def rebind(self, lines, ind, name):
        """``name = other`` (a plain copy: both names hold one array) or ``name`` defined with no
        derivative (``np.zeros_like(other)``): in a branch, the join's adjoint flows to ``other``
        on one path and stops on another (seed 3188: a copy's alias was zeroed before it was read)."""
        others = [n for n in self.env if "[" not in n and n not in ("flag", name)]
        if not others:
            return
        other = self.ch.choice(others)
        shape, bound, _ = self.env[other]
        form = self.ch.choice(["copy", "copy", "zeros_like", "full_like"])
        if form == "copy":
            self.assign(lines, ind, name, E(other, shape, bound, fresh=False))
        elif form == "zeros_like":
            self.assign(lines, ind, name, E(f"np.zeros_like({other})", shape, 0.0))
        else:
            self.assign(lines, ind, name, E(f"np.full_like({other}, 0.5)", shape, 0.5))
        self.tag("rebind_" + form)

    def arrays(self):
        return [n for n in self.env if len(self.env[n][0]) >= 1 and "[" not in n]

    def augment(self, lines, ind, name):
        shape, bound, fresh = self.env[name]
        op = self.ch.choice(["+=", "-=", "*=", "/="])
        e = self.expr(shape, self.ch.int(1, 2))
        if op in ("+=", "-="):
            e = self.squash(e, 30.0 if not self.loops else 1.0)
            bound = bound + e.bound * self.mult()
            src = e.src
        elif op == "*=":
            src = self.ch.choice(["np.cos({})", "np.tanh({})", "np.sin({})"]).format(e.src)
        else:
            e = self.squash(e)
            src = f"(1.0 + {e.src} * {e.src})"
        lines.append(f"{ind}{name} {op} {src}")
        self.tag("augment")
        self.env[name] = (shape, bound, fresh)
        if len(shape) >= 1:
            self.updated_in_place(name)

    def write_forms(self, shape):
        forms = []
        if shape == M:
            forms = [("[0]", V), ("[-1]", V), ("[1:]", (2, 4)), ("[:, 1]", R), ("[1, 2]", S),
                     ("[0:2, 1:3]", (2, 2)), ("[np.array([0, 2])]", (2, 4))]
            forms += [(f"[{n}]", V) for n, top in self.ints if top <= 2]
            forms += [(f"[:, {n}]", R) for n, top in self.ints if top <= 3]
        elif shape == V:
            forms = [("[0]", S), ("[1:3]", (2,)), ("[-1]", S), ("[::2]", (2,))]
            forms += [(f"[{n}]", S) for n, top in self.ints if top <= 3]
        elif shape == R:
            forms = [("[0]", S), ("[1:]", (2,))]
        elif shape == K:
            forms = [("[0]", (1,)), ("[:, 0]", R)]
        elif len(shape) >= 1:
            forms = [("[0]", shape[1:])]
        return forms

    # the write forms that may become a repeated one (one draw more only where these are chosen,
    # so the other programs' random streams stay as they were)
    REPEAT_TRIGGERS = {(M, "[np.array([0, 2])]"), (V, "[1:3]"), (R, "[1:]")}

    def repeated_write_form(self, shape):
        """(index, target shape) of a write whose integer array index repeats a position
        (negative indices aliasing positive ones included): numpy writes it once, the last
        write staying, ``+=`` included."""
        forms = {
            M: [("[np.array([2, 2])]", (2, 4)), ("[[0, -3]]", (2, 4)), ("[:2, [1, 1]]", (2, 2)),
                ("[[1, 1], 2:]", (2, 2)), ("[[0, 0, 2, 2], [1, 1, 3, 3]]", V),
                ("[[0, 2, 0], [1, 1, -3]]", R), ("[:, [0, 0, 2, 0]]", M)],
            V: [("[np.array([0, 2, 2])]", R), ("[[1, 1, 0]]", R), ("[[3, -1]]", (2,)),
                ("[np.array([1, 1, 1, 0])]", V)],
            R: [("[[2, -1]]", (2,)), ("[np.array([0, 0, 1])]", R)],
        }[shape]
        return self.ch.choice(forms)

    def index_write(self, lines, ind, name):
        """``name[idx] = v`` or ``name[idx] += v`` (and -=, *=) on an array no other name shares."""
        shape, bound, fresh = self.env[name]
        idx, target = self.ch.choice(self.write_forms(shape))
        repeated = (shape, idx) in self.REPEAT_TRIGGERS and self.ch.bool(50)
        if repeated:
            idx, target = self.repeated_write_form(shape)
        op = self.ch.choice(["=", "=", "+=", "-=", "*="])
        e = self.expr(target, self.ch.int(1, 2))
        if op == "=":
            e = self.squash(e, 2.0)
            bound = max(bound, e.bound)
            src = e.src
        elif op == "*=":
            src = self.ch.choice(["np.cos({})", "np.tanh({})"]).format(e.src)
        else:
            e = self.squash(e, 1.0)
            bound = bound + e.bound * self.mult()
            src = e.src
        lines.append(f"{ind}{name}{idx} {op} {src}")
        self.tag("index_write", "index_write_set" if op == "=" else "index_write_aug")
        if repeated:
            self.tag("index_write_repeated",
                     "index_write_repeated_set" if op == "=" else "index_write_repeated_aug")
        if op != "=" and ":" in idx:
            self.tag("index_write_slice_aug")
        self.prog.autograd = False
        self.env[name] = (shape, bound, fresh)
        self.updated_in_place(name)

    def write_call(self, lines, ind, name):
        """A numpy call that writes into ``name`` (an array no other name shares): ``out=`` (by
        keyword or position), ``np.add.at``/``np.subtract.at`` with a repeated index,
        ``np.copyto`` (``where=``), ``np.put``, ``np.place``, ``np.putmask``,
        ``np.fill_diagonal`` and the methods ``.fill``, ``.sort``, ``.put``."""
        shape, bound, fresh = self.env[name]
        n = size(shape)
        mask = f"np.arange({n}).reshape({shape}) % 2 == 0"
        forms = ["out", "out_positional", "add_at", "subtract_at", "copyto", "copyto_where", "put",
                 "place", "putmask", "fill", "sort", "put_method"]
        if len(shape) == 2 and shape[0] > 1 and shape[1] > 1:
            forms.append("fill_diagonal")
        form = self.ch.choice(forms)
        e = self.squash(self.expr(shape if form in ("out", "out_positional", "copyto", "copyto_where")
                                  else S, self.ch.int(1, 2)), 2.0)
        if form in ("out", "out_positional"):
            fn = self.ch.choice(["np.sin", "np.tanh", "np.cos"])
            src = f"{fn}({e.src}, out={name})" if form == "out" else f"{fn}({e.src}, {name})"
            bound = 1.0
        elif form in ("add_at", "subtract_at"):
            rows = [0, shape[0] - 1, 0]
            idx = self.ch.choice([str(rows), f"np.array({rows})"])
            src = f"np.{form[:-3]}.at({name}, {idx}, {e.src})"
            bound = bound + 2 * e.bound * self.mult()
        elif form in ("copyto", "copyto_where"):
            src = f"np.copyto({name}, {e.src})" if form == "copyto" else \
                f"np.copyto({name}, {e.src}, where={mask})"
            bound = max(bound, e.bound)
        elif form in ("put", "put_method"):
            positions = sorted({0, n - 1, n // 2})
            src = f"np.put({name}, {positions}, {e.src})" if form == "put" else \
                f"{name}.put({positions}, {e.src})"
            bound = max(bound, e.bound)
        elif form in ("place", "putmask"):
            src = f"np.{form}({name}, {mask}, {e.src})"
            bound = max(bound, e.bound)
        elif form == "fill_diagonal":
            src = f"np.fill_diagonal({name}, {e.src})"
            bound = max(bound, e.bound)
        elif form == "fill":
            src = f"{name}.fill({e.src})"
            bound = e.bound
        else:
            src = f"{name}.sort()"
            if len(shape) > 1:
                self.tag("write_sort_axis")
        lines.append(f"{ind}{src}")
        self.tag("write_call", f"write_{form}")
        self.prog.autograd = False
        self.env[name] = (shape, bound, fresh)
        self.updated_in_place(name)

    def alias(self, lines, ind, maxshape):
        """``z = y`` then plain re-binding of ``z``: ``y`` is untouched."""
        names = [n for n in self.env if "[" not in n and n != "flag"]
        if not names:
            return self.statement(lines, ind, 0)
        name_src = self.ch.choice(names)
        shape, bound, fresh = self.env[name_src]
        z = self.new_name("z")
        lines.append(f"{ind}{z} = {name_src}")
        e = self.squash(self.expr(shape, self.ch.int(1, 2)), 10.0)
        form, zb = self.ch.choice([("{z} + {e}", bound + e.bound), ("np.sin({z}) * {e}", e.bound),
                                   ("{z} * 0.5 - {e}", 0.5 * bound + e.bound)])
        lines.append(f"{ind}{z} = {form.format(z=z, e=e.src)}")
        self.unfresh(e)
        self.env[z] = (bshape(shape, e.shape), zb, True)
        if self.reassignable is not None:
            self.reassignable.add(z)
        self.tag("alias_rebind")

    def block(self, lines, ind, depth_left, n):
        start = len(lines)
        for _ in range(n):
            self.statement(lines, ind, depth_left)
            self.no_derivative(lines, ind)
        self.with_block(lines, ind, start)

    def no_derivative(self, lines, ind):
        """(side stream) a statement that carries no derivative, kept where it runs: an
        ``assert``, a logging call with an f-string, an annotated rebinding."""
        names = sorted(n for n in self.env if "[" not in n)
        if not names or self.py.random() > 0.12:
            return
        name = self.py.choice(names)
        form = self.py.choice(["assert", "log", "annotated"])
        if form == "assert":
            lines.append(f"{ind}assert np.all(np.isfinite({name})), f\"{name} is {{np.shape({name})}}\"")
        elif form == "log":
            self.prog.imports.add("logging")
            lines.append(f"{ind}LOG.debug(f\"{name}: {{np.ndim({name})}} axes\")")
        else:
            shape, bound, fresh = self.env[name]
            kind = "float" if shape == S else "np.ndarray"
            target = self.new_name("a")
            lines.append(f"{ind}{target}: {kind} = {name} * 1.0")
            self.bind(target, E(f"{name} * 1.0", shape, bound))
        self.tag("no_derivative", f"no_derivative_{form}")

    def with_block(self, lines, ind, start):
        """(side stream) the statements a block added since ``start``, in a ``with
        np.errstate(...)`` block (not when they jump: a break, continue or return there is
        refused)."""
        added = lines[start:]
        if not added or self.py.random() > 0.1 or \
                any(re.search(r"\b(break|continue|return)\b", line) for line in added):
            return
        lines[start:] = [f"{ind}with np.errstate(over=\"ignore\", invalid=\"ignore\"):"] + \
            ["    " + line for line in added]
        self.tag("with_errstate")

    def if_statement(self, lines, ind, depth_left):
        """if / elif / else; the environment afterwards is the taken branch's, except that a name
        is fresh only if it is fresh on every path (it may share memory otherwise)."""
        arms = self.ch.int(1, 3)  # 1: if, 2: if/else, 3: if/elif/else
        start_env, start_lists = dict(self.env), dict(self.lists)
        start_re = None if self.reassignable is None else set(self.reassignable)
        taken, decided = None, False
        arm_envs = []
        self.tag("if")
        for arm in range(arms):
            self.env, self.lists = dict(start_env), dict(start_lists)
            self.reassignable = None if start_re is None else set(start_re)
            if arm == 0:
                cond, out = self.condition(1)
                lines.append(f"{ind}if {cond}:")
            elif arm == arms - 1 and arms > 1:
                cond, out = None, True
                lines.append(f"{ind}else:")
                self.tag("else")
            else:
                cond, out = self.condition(1)
                lines.append(f"{ind}elif {cond}:")
                self.tag("elif")
            self.in_if += 1
            self.block(lines, ind + "    ", depth_left - 1, self.ch.int(1, 2))
            self.in_if -= 1
            arm_envs.append(self.env)
            if out and not decided:
                decided = True
                taken = (self.env, self.lists, self.reassignable)
        if not decided:  # no arm ran
            taken = (start_env, start_lists, start_re)
        paths = arm_envs + ([start_env] if arms == 1 else [])
        self.env, self.lists, self.reassignable = taken
        for name, (shape, bound, fresh) in list(self.env.items()):
            if fresh and not all(p[name][2] for p in paths if name in p):
                self.env[name] = (shape, bound, False)

    # ---------------------------------------------------------------- loops
    def sequence(self, avoid):
        """Something to iterate over: (source, element shape, element bound, length)."""
        options = []
        for n, (shape, bound, _) in self.env.items():
            if len(shape) >= 1 and n not in avoid and "[" not in n:
                options.append(("name", n))
                if len(shape) == 2:
                    options.append(("T", n))
        for n, (es, eb, length) in self.lists.items():
            if length >= 1:
                options.append(("list", n))
        options += [("expr",), ("literal",)]
        pick = self.ch.choice(options)
        if pick[0] in ("name", "T"):
            shape, bound, fresh = self.env[pick[1]]
            src = pick[1] if pick[0] == "name" else f"{pick[1]}.T"
            if pick[0] == "T":
                shape = shape[::-1]
            e = self.guard(E(src, shape, bound, fresh=False))
            self.unfresh(e)
            self.tag("for_array")
            return e.src, shape[1:], bound, shape[0]
        if pick[0] == "list":
            es, eb, length = self.lists[pick[1]]
            self.tag("for_list")
            return pick[1], es, eb, length
        if pick[0] == "expr":
            shape = self.ch.choice([M, V, R, K])
            self.tag("for_array")
            return self.fit_arg(shape, 2), shape[1:], 2.0, shape[0]
        es = self.ch.choice([M, V, S, R])
        n = self.ch.int(2, 3)
        items = []
        for _ in range(n):
            e = self.guard(self.squash(self.expr(es, 1), 2.0))
            self.unfresh(e)
            items.append(e.src if e.shape == es else self.fit_arg(es, 0))
        self.tag("for_list", "for_list_literal")
        return f"[{', '.join(items)}]", es, 2.0, n

    def shifted(self, avoid):
        """``zip(p[:-1], p[1:])`` over an array with at least two rows."""
        arrays = [n for n, (sh, _, _) in self.env.items()
                  if len(sh) >= 1 and sh[0] >= 2 and n not in avoid and "[" not in n]
        if not arrays:
            return None
        n = self.ch.choice(arrays)
        shape, bound, _ = self.env[n]
        self.unfresh(E(n, shape, bound, fresh=False))
        if n in self.pinned():
            n = f"({n} + 0.0)"
        return f"zip({n}[:-1], {n}[1:])", [shape[1:], shape[1:]], bound, shape[0] - 1

    def iteration(self, avoid):
        """(header without ``for``/``:``, loop variables [(name, shape, bound)], index (name, top)
        or None, trip count)."""
        forms = ["range", "range", "array", "zip", "zip", "enumerate", "enumerate_zip"]
        form = self.ch.choice([f for f in forms if "zip" not in f or "zip" not in self.avoid])
        if form == "range":
            k = self.ch.choice([0, 1, 1, 2, 2, 3, 3])  # none: the loop runs zero times
            idx = self.index_name()
            self.tag("for_range", *(["for_zero_trips"] if k == 0 else []))
            return f"{idx} in range({k})", [], (idx, max(k - 1, 0)), k
        if form == "array":
            src, es, eb, n = self.sequence(avoid)
            if len(es) == 1 and es[0] >= 2 and self.ch.bool(60):  # rows unpacked: `for a, b in pairs`
                names = [self.loop_var("a", avoid | names_in(src)) for _ in range(2)]
                if names[0] != names[1] and es[0] % 2 == 0:
                    self.tag("tuple_target", "for_pairs")
                    return f"{names[0]}, {names[1]} in np.reshape({src}, (-1, 2))", \
                        [(nm, S, eb) for nm in names], None, n * es[0] // 2
            var = self.loop_var("row" if es else "el", avoid | names_in(src))
            return f"{var} in {self.maybe_reversed(src)}", [(var, es, eb)], None, n
        if form in ("zip", "enumerate_zip"):
            shifted = self.shifted(avoid) if self.ch.bool(30) else None
            if shifted:
                src, shapes, eb, n = shifted
                bounds = [eb, eb]
                self.tag("for_zip_shift")
            else:
                seqs = [self.sequence(avoid) for _ in range(self.ch.choice([2, 2, 3]))]
                src = f"zip({', '.join(s[0] for s in seqs)})"
                shapes, bounds, n = [s[1] for s in seqs], [s[2] for s in seqs], min(s[3] for s in seqs)
                if len(seqs) == 3:
                    self.tag("for_zip3")
            self.tag("for_zip", "tuple_target")
            names = []
            for _ in shapes:
                names.append(self.loop_var("a", avoid | names_in(src) | set(names)))
            target = ", ".join(names)
            lvars = list(zip(names, shapes, bounds))
            if form == "zip":
                return f"{target} in {src}", lvars, None, n
            idx = self.index_name()
            self.tag("for_enumerate", "for_enumerate_zip")
            return f"{idx}, ({target}) in enumerate({src})", lvars, (idx, n - 1), n
        src, es, eb, n = self.sequence(avoid)
        idx = self.index_name()
        var = self.loop_var("p", avoid | names_in(src))
        self.tag("for_enumerate", "tuple_target")
        src = self.maybe_reversed(src)
        if self.ch.bool(25):  # a start: the counter runs from 1 to n
            self.tag("for_enumerate_start")
            return f"{idx}, {var} in enumerate({src}, 1)", [(var, es, eb)], (idx, n), n
        return f"{idx}, {var} in enumerate({src})", [(var, es, eb)], (idx, n - 1), n

    def maybe_reversed(self, src):
        """``src``, or (sometimes) ``reversed(src)``: the items last to first, the counter of an
        ``enumerate`` around it still counting up."""
        if not self.ch.bool(25):
            return src
        self.tag("for_reversed")
        return f"reversed({src})"

    def loop_var(self, prefix, avoid):
        """A new loop variable, or (sometimes) the name of an earlier loop's variable that this
        context may re-bind."""
        old = [n for n in self.targets() if n in self.loop_vars and n not in avoid]
        if old and self.ch.bool(60):
            self.tag("loop_name_reused")
            return self.ch.choice(old)
        name = self.new_name(prefix)
        self.loop_vars.add(name)
        return name

    def index_name(self):
        idx = "i" if not self.ints else "j"
        if any(n == idx for n, _ in self.ints):
            idx = self.new_name("i")
        return idx

    def carried_setup(self, lines, ind):
        carried = []
        for _ in range(self.ch.int(1, 2)):
            existing = [n for n in self.targets() if n not in carried]
            if existing and self.ch.bool(40):
                carried.append(self.ch.choice(existing))
            else:
                name = self.new_name("acc")
                if self.ch.bool():
                    self.assign(lines, ind, name, E("0.0", S, 0.0))
                else:
                    e = self.squash(self.expr(self.ch.choice([M, V, S]), 2), 6.0)
                    self.assign(lines, ind, name, e)
                carried.append(name)
        return carried

    def loop_statement(self, lines, ind, depth_left, append_to=None):
        """A for or while loop with carried variables, maybe break/continue and ``else``;
        ``append_to``: a list name the body appends to (its length is updated)."""
        if self.loops:
            self.tag("nested_loop")
        carried = self.carried_setup(lines, ind)
        while_loop = self.ch.bool(20)
        steps = None
        if while_loop:
            steps = self.new_name("steps")
            lines.append(f"{ind}{steps} = 0")
            trips = self.ch.choice([0, 1, 2, 2, 3])
            w = self.ch.choice(["scalar", "sum", "max"])
            self.guarded += 1  # a while test runs again and again: no comprehension there
            a = self.expr(S if w == "scalar" else M, 2)
            self.guarded -= 1
            val = a.src if w == "scalar" else f"np.{w}({a.src})"
            sq = self.ch.choice(["np.tanh", "np.sin", "np.cos"])
            if self.ch.bool():
                value, op = f"{sq}({val}) + 3.0 * {steps}", self.ch.choice(["<", "<="])
            else:
                value, op = f"{sq}({val}) - 3.0 * {steps}", self.ch.choice([">", ">="])
            k = len(self.prog.sites)
            self.prog.sites.append(Site(value, op, True, steps=steps, trips=trips))
            cond = f"__SITE{k}__"
            if self.ch.bool(30):
                other, out = self.condition(1, nest=1)
                if out:
                    cond = f"({cond}) and ({other})"
                else:
                    cond = f"({cond}) and not ({other})"
            header, lvars, index, n = f"while {cond}:", [], (steps, trips), trips
            self.tag("while", "site")
        else:
            it, lvars, index, n = self.iteration(set(carried))
            header = f"for {it}:"
            self.unfresh(E(it, (), 0.0, fresh=False))  # its loop variables may be views of those
        # jumps: a break/continue on the loop index or a computed condition
        jump = None
        if self.ch.bool(30) and n >= 1:
            jump = self.ch.choice(["continue", "break"])
        forms = {}
        fresh_before = {name: self.env[name][2] for name in carried}
        for name in carried:
            shape, b0, fresh = self.env[name]
            form = self.ch.choice(["contract", "sin", "cos_mul"] + (["augment"] if fresh else []))
            bound = {"contract": max(b0, 2.0), "sin": max(b0, 1.0), "cos_mul": b0, "augment": b0 + n}[form]
            forms[name] = form
            self.env[name] = (shape, bound, fresh if form in ("augment", "cos_mul") else True)
        start_env, start_lists = dict(self.env), dict(self.lists)
        lines.append(f"{ind}{header}")
        body = ind + "    "
        outer_re = self.reassignable
        self.reassignable = set()
        for var, shape, bound in lvars:
            self.env[var] = (shape, bound, False)
        if index:
            self.ints.append(index)
        self.loops.append({"trips": max(n, 1), "pinned": set(), "carried": set(carried)})
        n_before = len(lines)
        if while_loop:
            lines.append(f"{body}{steps} = {steps} + 1")
        else:  # not in a while loop: its condition reads its names again, at their new shapes
            self.widen(lines, body, [c for c in carried if c not in names_in(header)], n)
        self.block(lines, body, depth_left - 1, self.ch.int(0, 2))
        appended = False
        if append_to:
            es = self.lists[append_to][0]
            e = self.guard(E(self.fit_arg(es, self.ch.int(1, 2)), es, 2.0, fresh=False))
            self.unfresh(e)
            lines.append(f"{body}{append_to}.append({e.src})")
            self.tag("list_append")
            appended = True
        # iterations that run the statements before the jump; whether a break ends the loop
        runs, broke = n, False
        if jump:
            if index and n > 1 and self.ch.bool(70):
                lo = 1 if while_loop else 0
                c = self.ch.int(lo, index[1] if not while_loop else n)
                lines.append(f"{body}if {index[0]} == {c}:")
                fires = True
                at = c - 1 if while_loop else c
            else:
                cond, fires = self.condition(1)
                lines.append(f"{body}if {cond}:")
                at = 0
            if jump == "break" and self.in_main and not self.in_if and self.py.random() < 0.4:
                # a search that returns early: the function's value from what is bound here (not
                # in an if's arm: the statements after the if move into each arm, where a name
                # only the taken arm binds is read before it is assigned, and refused)
                ret = " + ".join(f"np.sum({c})" for c in sorted(carried)) or "0.0"
                lines.append(f"{body}    return np.sum(np.tanh(x)) + {ret}")
                self.tag("return_in_loop")
            else:
                lines.append(f"{body}    {jump}")
            self.tag(jump)
            if fires and jump == "break":
                runs, broke = at + 1, True
        for name in carried:
            shape, bound, fresh = self.env[name]
            e = self.expr(shape, self.ch.int(1, 2))
            form = forms[name]
            if form == "augment" and not fresh:  # the body made an alias of it
                form = "cos_mul"
            if form == "contract":
                c = self.ch.choice([0.5, -0.5, 0.3])
                lines.append(f"{body}{name} = {c} * {name} + np.tanh({e.src})")
            elif form == "sin":
                lines.append(f"{body}{name} = np.sin({name} + {self.squash(e, 30.0).src})")
            elif form == "cos_mul":
                lines.append(f"{body}{name} = {name} * np.cos({e.src})")
            else:
                lines.append(f"{body}{name} += np.cos({e.src})")
                self.tag("augment")
            self.unfresh(e)
        assert len(lines) > n_before or carried
        self.loops.pop()
        if index:
            self.ints.pop()
        self.reassignable = outer_re
        if outer_re is not None:
            outer_re.update(carried)
        for name in carried:  # the updates may not have run (break, continue, no trip)
            shape, bound, fresh = self.env[name]
            self.env[name] = (shape, bound, fresh and fresh_before[name])
        if appended:  # the list was made just before this loop
            es, eb, length = self.lists[append_to]
            self.lists[append_to] = (es, eb, length + runs)
        if n == 0:  # the body never ran: only what was bound before it is bound
            for name in list(self.env):
                if name not in start_env:
                    del self.env[name]
            self.lists = {k: v for k, v in self.lists.items() if k in start_lists or k == append_to}
        if self.ch.bool(20):
            # loop else: runs when no break ended the loop
            before, before_lists = dict(self.env), dict(self.lists)
            lines.append(f"{ind}else:")
            self.tag("loop_else")
            self.block(lines, body, depth_left - 1, 1)
            if broke:
                self.env, self.lists = before, before_lists
        # names first bound in the body stay readable after the loop: the body runs at least once
        # (n >= 1) and every statement of the block comes before the loop's break/continue

    WIDER = {S: [V, M, K], V: [M], K: [M]}

    def widen(self, lines, body, carried, n):
        """Maybe rebind a carried name to a wider shape first thing in the body: reads before the
        loop see the narrow value, the rest of the program the wide one. Only in a loop outside
        every other (an enclosing loop's next trip would see the wide value where it was written
        for the narrow one) that runs at least once, so its shape after the loop is known; a for
        loop, and not a name its header reads (evaluated once, before the rebinding)."""
        if len(self.loops) > 1 or n < 1:  # self.loops holds this loop already
            return
        for name in carried:
            shape, bound, _ = self.env[name]
            if shape not in self.WIDER or not self.ch.bool(25):
                continue
            wide = self.ch.choice(self.WIDER[shape])
            del self.env[name]  # the next trip would read it at its new shape
            e = self.fit_arg(wide, self.ch.int(1, 2))
            first = self.ch.choice(["{} * ", ""]).format(name)  # reading the narrow value, or not
            lines.append(f"{body}{name} = {first}np.cos({e})")
            self.unfresh(E(e, wide, 2.0, fresh=False))
            self.env[name] = (wide, bound if first else max(bound, 1.0), True)
            self.tag("loop_widen")

    def list_statement(self, lines, ind, depth_left):
        """A list, built by a loop's appends or written as a literal (then maybe appended to)."""
        name = self.new_name("lst")
        es = self.ch.choice([M, V, V, S, R, K])
        if self.ch.bool(65):
            lines.append(f"{ind}{name} = []")
            self.tag("list_empty")
            self.lists[name] = (es, 2.0, 0)
            self.loop_statement(lines, ind, depth_left, append_to=name)
        else:
            items = []
            for _ in range(self.ch.int(1, 3)):
                e = self.guard(E(self.fit_arg(es, 1), es, 2.0, fresh=False))
                self.unfresh(e)
                items.append(e.src)
            lines.append(f"{ind}{name} = [{', '.join(items)}]")
            self.tag("list_literal")
            n = len(items)
            if self.ch.bool():
                e = self.guard(E(self.fit_arg(es, 1), es, 2.0, fresh=False))
                self.unfresh(e)
                lines.append(f"{ind}{name}.append({e.src})")
                self.tag("list_append")
                n += 1
            self.lists[name] = (es, 2.0, n)

    def container_statement(self, lines, ind):
        """Containers of differentiated values inside the function: a list of tuples written as
        one nested display, walked (``for a, b in layers``) or read at a counter
        (``layers[i][0]``); a dict (nested, or of tuples) read by constant keys; a dict walked by
        ``d.items()``, ``d.values()`` or its keys. Defines one new name from what it read."""
        self.tag("container")
        sa, sb = self.ch.choice([M, V, S]), self.ch.choice([V, S])
        shape = bshape(sa, sb)
        form = self.ch.choice(["tuples", "dict", "walk"])
        n = self.ch.int(1, 3)
        name = self.new_name()
        if form == "dict":
            d = self.new_name("d")
            a, b = self.container_item(sa), self.container_item(sb)
            if self.ch.bool():
                self.tag("container_dict_nested")
                lines.append(f'{ind}{d} = {{"inner": {{"p": {a}, "r": 0.5}}, "q": {b}}}')
                read = f'{d}["inner"]["p"] * {d}["q"]'
            else:
                self.tag("container_dict")
                lines.append(f'{ind}{d} = {{"p": {a}, "q": {b}}}')
                read = f'{d}["p"] * {d}["q"]'
            self.assign(lines, ind, name, E(read, shape, 4.0))
            return
        zero = "0.0" if shape == S else f"np.zeros({shape[0] if len(shape) == 1 else shape})"
        lines.append(f"{ind}{name} = {zero}")
        u, w = self.new_name("u"), self.new_name("w")
        pairs = [f"({self.container_item(sa)}, {self.container_item(sb)})" for _ in range(n)]
        if form == "tuples":
            layers = self.new_name("layers")
            lines.append(f"{ind}{layers} = [{', '.join(pairs)}]")
            self.tag("container_nested")
            if self.ch.bool():
                self.tag("container_list_tuples")
                lines.append(f"{ind}for {u}, {w} in {layers}:")
                lines.append(f"{ind}    {name} = {name} + {u} * {w}")
            else:
                self.tag("container_index")
                k = self.new_name("k")
                lines.append(f"{ind}for {k} in range(len({layers})):")
                lines.append(f"{ind}    {name} = {name} + {layers}[{k}][0] * {layers}[{k}][1]")
        else:
            d, k = self.new_name("d"), self.new_name("k")
            keys = [f'"{c}"' for c in "pqr"[:n]]
            view = self.ch.choice(["items", "values", "keys"])
            self.tag(f"container_{view}")
            if self.ch.bool():  # a dict of arrays
                values = [self.container_item(sa) for _ in range(n)]
                lines.append(f"{ind}{d} = {{{', '.join(f'{q}: {v}' for q, v in zip(keys, values))}}}")
                self.tag("container_dict")
                header, use = {"items": (f"{k}, {u} in {d}.items()", u),
                               "values": (f"{u} in {d}.values()", u),
                               "keys": (f"{k} in {d}", f"{d}[{k}]")}[view], "np.sin({}) * 2.0"
                lines.append(f"{ind}for {header[0]}:")
                lines.append(f"{ind}    {name} = {name} + {use.format(header[1])}")
                self.tag("elementwise")
                self.assign_result(name, n, sa, shape)
                return
            lines.append(f"{ind}{d} = {{{', '.join(f'{q}: {v}' for q, v in zip(keys, pairs))}}}")
            self.tag("container_nested")
            header = {"items": f"{k}, ({u}, {w}) in {d}.items()", "values": f"{u}, {w} in {d}.values()",
                      "keys": f"{k} in {d}"}[view]
            lines.append(f"{ind}for {header}:")
            if view == "keys":
                lines.append(f"{ind}    {u}, {w} = {d}[{k}]")
            lines.append(f"{ind}    {name} = {name} + {u} * {w}")
        self.assign_result(name, n, shape, shape)

    def container_item(self, shape) -> str:
        """An item of a container display: an expression of ``shape``, |value| <= 2."""
        e = self.guard(E(self.fit_arg(shape, 1), shape, 2.0, fresh=False))
        self.unfresh(e)
        return e.src

    def assign_result(self, name, n, item_shape, shape):
        """``name`` as a container production left it: a sum of ``n`` terms of |value| <= 4."""
        self.bind(name, E(name, bshape(item_shape, shape), 4.0 * n))

    # ---------------------------------------------------------------- functions
    def helper(self, index, imported=False):
        kind = self.ch.choice([k for k in ["plain", "plain", "closure", "tuple_param", "pair", "custom"]
                               if k not in self.avoid])
        if imported and kind == "closure":
            kind = "plain"
        if kind == "custom":
            return self.custom_helper(index)
        name = f"helper{index}"
        nparams = self.ch.int(1, 2)
        params = [(p, self.ch.choice([M, V, S])) for p in ("a", "b")[:nparams]]
        if kind == "tuple_param":
            params[0] = ("ab", ("tuple", self.ch.choice([M, V, S]), self.ch.choice([M, V, S])))
        default = self.ch.bool(40)
        saved = (self.env, self.lists, self.reassignable, self.ints, self.loops, self.in_if, self.helpers)
        if imported:  # an imported helper can call only the helpers of its own module
            self.helpers = [h for h in self.helpers if h.get("imported")]
        self.env, self.lists, self.ints, self.loops, self.in_if = {}, {}, [], [], 0
        lines = []
        for p, shape in params:
            if shape and shape[0] == "tuple":
                if self.ch.bool():
                    lines.append(f"    p1, p2 = {p}")
                    self.env["p1"] = (shape[1], 2.0, False)
                    self.env["p2"] = (shape[2], 2.0, False)
                    self.tag("helper_tuple_unpack")
                else:
                    self.env[f"{p}[0]"] = (shape[1], 2.0, False)
                    self.env[f"{p}[1]"] = (shape[2], 2.0, False)
            else:
                self.env[p] = (shape, 2.0, False)
        if default:
            self.env["c"] = (S, 1.0, False)
        if kind == "closure":
            # each closure's own free name: two closures of one program, one calling the other,
            # with one name for two values are refused (their code shares one module)
            self.env[f"scale{index}"] = (S, 1.0, False)
            self.frozen = {f"scale{index}"}
        sig = ", ".join(p for p, _ in params) + (", c=0.5" if default else "")
        self.reassignable = None
        self.block(lines, "    ", 1, self.ch.int(0, 2))
        nout = 2 if kind == "pair" else 1

        def result():
            return [self.squash(self.expr(self.ch.choice([M, V, S]), self.ch.int(1, 3)), 30.0)
                    for _ in range(nout)]

        outs = result()
        if self.ch.bool(15):
            # an early return, with results of the same shapes as the final one
            cond, _ = self.condition(1)
            early = [self.squash(self.expr(e.shape, 2), 30.0) for e in outs]
            early = [e.src if e.shape == f.shape else f"({e.src} + np.zeros({f.shape}))"
                     if f.shape else f"np.sum({e.src})" for e, f in zip(early, outs)]
            lines.append(f"    if {cond}:")
            lines.append(f"        return {', '.join(early)}")
            outs = [E(o.src, o.shape, max(o.bound, 30.0)) for o in outs]
            self.tag("early_return", "helper_early_return")
        lines.append(f"    return {', '.join(e.src for e in outs)}")
        self.env, self.lists, self.reassignable, self.ints, self.loops, self.in_if, self.helpers = saved
        self.frozen = set()
        body = "\n".join(lines) if len(lines) else ""
        if kind == "closure":
            c = self.ch.choice([0.5, 1.5, -0.25])
            src = (f"def make_{name}(scale{index}):\n" + f"    def {name}({sig}):\n"
                   + "\n".join("    " + ln for ln in lines) + f"\n\n    return {name}\n\n\n{name} = make_{name}({c})")
        else:
            src = f"def {name}({sig}):\n{body}"
        self.helpers.append(dict(name=name, params=params, default=default,
                                 outs=[(e.shape, e.bound) for e in outs], kind=kind, imported=imported))
        if imported:
            self.prog.lib_helpers.append((src, src))
            self.prog.lib_names.append(name)
            self.tag("imported_helper")
        else:
            self.prog.helpers.append((src, src))
            self.tag(f"helper_{kind}")

    CUSTOM = {  # value of a, its derivative (may use the value, e)
        "sin": ("np.sin({a})", "np.cos({a})", 1.0),
        "tanh": ("np.tanh({a})", "(1.0 - {e} * {e})", 1.0),
        "square": ("0.5 * {a} * {a}", "{a}", 2.0),
        "log": ("np.log(1.0 + {a} * {a})", "2.0 * {a} / (1.0 + {a} * {a})", 1.7),
        "exp": ("np.exp(0.3 * {a})", "0.3 * {e}", 1.9),
    }

    def custom_helper(self, index):
        """``@s2sgrad.custom_gradient`` with a correct grad_fn (its autograd twin returns the
        value) or, one time in three, a stated one that is 1.5 times the value's derivative (its
        twin an autograd primitive with that gradient; the program is then checked against
        autograd and against differences of its own gradients, not of its value)."""
        name = f"cg{index}"
        params = [(p, self.ch.choice([M, V, S])) for p in ("a", "b")[:self.ch.int(1, 2)]]
        fns = [self.ch.choice(sorted(self.CUSTOM)) for _ in params]
        body, values, derivs, bound = [], [], [], 1.0
        for (p, _), fn in zip(params, fns):
            val, der, b = self.CUSTOM[fn]
            e = f"e_{p}"
            body.append(f"    {e} = {val.format(a=p)}")
            values.append(e)
            derivs.append(der.format(a=p, e=e))
            bound *= b
        if len(params) == 1:
            value, grads = values[0], [f"dy * {derivs[0]}"]
        elif self.ch.bool():
            value, grads = f"{values[0]} * {values[1]}", [f"dy * {derivs[0]} * {values[1]}",
                                                           f"dy * {values[0]} * {derivs[1]}"]
        else:
            value, grads = f"{values[0]} + {values[1]}", [f"dy * {derivs[0]}", f"dy * {derivs[1]}"]
            bound = sum(self.CUSTOM[fn][2] for fn in fns)
        sig = ", ".join(p for p, _ in params)
        # a stated gradient that is not the value's derivative (1.5 times it): TensorFlow's
        # semantics say it governs the outputs at every order (second order included)
        stated = self.ch.bool(35)
        if stated:
            grads = [g.replace("dy * ", "dy * 1.5 * ", 1) for g in grads]
        if self.ch.bool(30):
            grad_fn = f"lambda dy: {grads[0]}" if len(grads) == 1 else f"lambda dy: ({', '.join(grads)})"
            real = body + [f"    return {value}, {grad_fn}"]
            self.tag("custom_gradient_lambda")
        else:
            real = body + ["", "    def grad(dy):", f"        return {', '.join(grads)}", "",
                           f"    return {value}, grad"]
        src = f"@s2sgrad.custom_gradient\ndef {name}({sig}):\n" + "\n".join(real)
        twin = f"def {name}({sig}):\n" + "\n".join(body + [f"    return {value}"])
        if stated:  # autograd traces positional arguments only: the primitive is called so
            prim = f"_{name}_primitive"
            twin = f"@primitive\ndef {prim}({sig}):\n" + "\n".join(body + [f"    return {value}"])
            twin += "\n" + "".join(
                f"\n\ndef _{name}_vjp_{p}(ans, {sig}):\n" + "\n".join(body)
                + f"\n    return lambda dy: _sum_to({g}, {p})\n" for (p, _), g in zip(params, grads))
            twin += f"\n\ndefvjp({prim}, {', '.join(f'_{name}_vjp_{p}' for p, _ in params)})"
            twin += f"\n\n\ndef {name}({sig}):\n    return {prim}({sig})"
            self.prog.imports.add("stated")
            self.tag("custom_gradient_stated")
        shape = S
        for _, sh in params:
            shape = bshape(shape, sh)
        self.prog.imports.add("s2sgrad")
        self.prog.helpers.append((src, twin))
        self.helpers.append(dict(name=name, params=params, default=False, outs=[(shape, bound)],
                                 kind="custom"))
        self.tag("custom_gradient")

    def refusal(self, lines):
        """An in-place update of a name that shares memory with another name read afterwards:
        s2sgrad must refuse it, located at this line."""
        arrays = [n for n, (sh, _, _) in self.env.items() if len(sh) >= 1 and "[" not in n]
        y = self.ch.choice(arrays)
        shape, bound, _ = self.env[y]
        z = self.new_name("z")
        form = self.ch.choice(["alias", "alias_write", "slice", "T", "reshape", "stale_index", "stale_value"])
        if form.startswith("stale"):
            # a name a loop's step reads before the step assigns it (the step before's value)
            k, j = self.new_name("k"), self.new_name("j")
            read = f"{y}[{j}:{j} + 1]" if form == "stale_index" and shape[0] >= 2 else f"{y} * {j}"
            lines.append(f"    {z} = {y} * 0.5")
            lines.append(f"    for {k} in range(2):")
            lines.append(f"        if {k} > 0:")
            lines.append(f"            {z} = {z} + {read}  # refused at {j}")
            lines.append(f"        {j} = " + (f"{k}" if "[" in read else f"np.sin({y}[0])"))
            self.tag(f"refuse_{form}")
            return y
        if form in ("alias", "alias_write"):
            lines.append(f"    {z} = {y}")
            zshape = shape
        elif form == "slice":
            lines.append(f"    {z} = {y}[1:]")
            zshape = (shape[0] - 1,) + shape[1:]
        elif form == "T":
            lines.append(f"    {z} = {y}.T")
            zshape = shape[::-1]
        else:
            lines.append(f"    {z} = {y}.reshape(-1)")
            zshape = (size(shape),)
        if form == "alias" or (form != "alias_write" and self.ch.bool()) or zshape[0] == 0:
            e = self.squash(self.expr(zshape, 1), 1.0)
            lines.append(f"    {z} += {e.src}  # refused")
        else:
            e = self.squash(self.expr(zshape[1:], 1), 1.0)
            lines.append(f"    {z}[0] = {e.src}  # refused")
        self.tag(f"refuse_{form}")
        return y

    def program(self) -> Program:
        ch = self.ch
        seed = ch.int(0, 2**16)
        self.py = random.Random(seed * 7919 + 26)
        self.made = random.Random(seed * 7919 + 27)
        rng = np.random.default_rng(seed)
        self.prog.x = np.round(rng.uniform(-1, 1, M), 3)
        self.prog.v = np.round(rng.uniform(-1, 1, V), 3)
        self.prog.s = round(float(rng.uniform(-1, 1)), 3)
        self.prog.flag = ch.bool()
        for index in range(ch.int(0, 2)):
            self.helper(index + 1, imported=ch.bool(15))
        self.env = {"x": (M, 1.0, False), "v": (V, 1.0, False), "s": (S, 1.0, False)}
        self.lists = {}
        self.reassignable = None
        self.in_main = True
        lines = ["def f(x, v, s, flag):"]
        if self.py.random() < 0.1:
            lines.append('    """A generated program (its docstring kept, never differentiated)."""')
            self.tag("docstring")
        for n in range(ch.int(1, 4)):
            # an early return on a computed condition (taken or not, as drawn)
            if n > 0 and ch.bool(15):
                cond, _ = self.condition(1)
                e = self.expr(M, 2)
                lines.append(f"    if {cond}:")
                lines.append(f"        return np.sum({e.src})")
                self.tag("early_return")
            self.statement(lines, "    ", 2, top=True)
        tail = ""
        if self.refuse:
            y = self.refusal(lines)
            tail = f" + np.sum({y})"
            self.prog.refused = True
        e = self.expr(M, ch.int(1, 3))
        last = [n for n in self.env if n not in ("x", "v", "s")]
        if last and ch.bool(70):
            tail += f" + np.sum({ch.choice(last)})"
        tail += self.global_batch()
        lines.append(f"    return np.sum({e.src}){tail}")
        self.prog.main = "\n".join(lines)
        return self.prog

    def global_batch(self) -> str:
        """A term reading module globals the test rebinds between calls of one gradient (``GB``
        to another array, of another shape too, ``GS`` to another float): drawn last, so the
        rest of each program is what it was before this production."""
        if not self.ch.bool(30) or self.env.get("x", (M,))[0] != M:
            return ""  # (x rebound to another shape: GB * np.sin(x) would not broadcast)
        self.prog.imports.add("gbatch")
        self.tag("global_rebound")
        return " + GS * np.sum(GB * np.sin(x))"


def generate(ch: Chooser, refuse: bool = False, avoid=()) -> Program:
    """A random program; ``refuse``: one that ends with an in-place update s2sgrad must refuse;
    ``avoid``: productions to leave out (for looking past known bugs outside the suite)."""
    gen = Gen(ch, refuse, avoid)
    prog = gen.program()
    if not refuse and "tree_args" not in avoid and ch.bool(40):  # drawn last: earlier draws stay
        tree_arguments(gen, prog)
    if not refuse and "star_args" not in avoid and ch.bool(30):  # after it: its draws stay too
        star_arguments(gen, prog)
    if not refuse:  # drawn after every other production: earlier seeds keep their programs
        python_terms(gen, prog)
    if not refuse and "scipy_terms" not in avoid and ch.bool(35):  # every draw above stays
        scipy_terms(gen, prog)
    if not refuse and "object_args" not in avoid and ch.bool(30):  # last of all: every draw above stays
        object_arguments(gen, prog)
    return prog


def python_terms(gen: "Gen", prog: Program) -> None:
    """Terms ``f`` adds to every value it returns, computed from ``x``, ``v``, ``s`` at the top
    of its body: a dict comprehension (``dict_comprehension``) and the methods and property of a
    class of the module (``user_class``: on a global object, on one built in ``f`` from the
    differentiated values, or on a dataclass built there)."""
    ch = gen.ch
    lines, terms = [], []
    if "dict_comprehension" not in gen.avoid and ch.bool(30):
        terms.append(dict_comprehension(gen, lines))
    if "user_class" not in gen.avoid and ch.bool(30):
        terms.append(user_class(gen, prog, lines))
    if not terms:
        return
    extra = " + ".join(terms)
    head, _, rest = prog.main.partition("def f(x, v, s, flag):\n")
    body = rest.split("\n")
    start = 1 if body and body[0].lstrip().startswith('"""') else 0
    out, nested = body[:start] + lines, None
    for k, line in enumerate(body[start:], start):
        indent = len(line) - len(line.lstrip())
        if line.strip() and indent == 0:  # the end of f
            out += body[k:]
            break
        if nested is not None and (not line.strip() or indent > nested):
            out.append(line)  # a local function's body: its returns are its own
            continue
        nested = indent if line.lstrip().startswith("def ") else None
        if line.lstrip().startswith("return "):
            line = f"{' ' * indent}return ({line.strip()[len('return '):]}) + ({extra})"
        out.append(line)
    prog.main = head + "def f(x, v, s, flag):\n" + "\n".join(out)


def dict_comprehension(gen: "Gen", lines: list) -> str:
    """A dict comprehension over names and values (``zip``) or over indices (``range``), its
    entries read by key; returns the term it adds."""
    ch = gen.ch
    c = [ch.choice([0.5, -0.25, 0.75, 1.5]) for _ in range(3)]
    fn = ch.choice(["np.tanh", "np.sin", "np.cos"])
    if ch.bool():
        lines.append(f"    dc_parts = {{key: {fn}(value) * scale for key, value, scale in "
                     f"zip(('x', 'v', 's'), (x, v, s), ({c[0]}, {c[1]}, {c[2]}))}}")
        gen.tag("dict_comprehension", "dict_comprehension_zip")
        return "np.sum(dc_parts['x'] * dc_parts['v']) + dc_parts['s'] * np.sum(dc_parts['v'])"
    lines.append(f"    dc_rows = {{i: {fn}(x[i] * {c[0]}) for i in range(3) if i != {ch.int(0, 3)}}}")
    gen.tag("dict_comprehension", "dict_comprehension_range")
    return f"sum(np.sum(row * {c[1]}) for row in dc_rows.values())"


USER_CLASSES = """

class Affine:
    \"\"\"A class of the module whose methods f calls.\"\"\"

    def __init__(self, w, b):
        self.w = w
        self.b = b

    def apply(self, z):
        return np.tanh(z * self.w + self.b)

    @property
    def norm(self):
        return np.sum(self.w * self.w)

    def score(self, z):
        return np.sum(self.apply(z)) * 0.5 + self.norm * 0.1


@dataclasses.dataclass
class Gain:
    w: object
    b: object

    def apply(self, z):
        return np.sin(z * self.w) + self.b


AFFINE = Affine(np.linspace(-0.5, 0.5, 4), 0.25)"""


def user_class(gen: "Gen", prog: Program, lines: list) -> str:
    """Methods and a property of ``Affine`` (``USER_CLASSES``) on the global ``AFFINE`` or on an
    object built in ``f`` from ``v`` and ``s``, or of the dataclass ``Gain`` built there; returns
    the term it adds."""
    ch = gen.ch
    form = ch.choice(["global", "built", "dataclass"])
    gen.tag("user_class", f"user_class_{form}")
    z = ch.choice(["x", "v"])
    if gen.env.get("x", (M,))[0] != M:
        z = "v"  # (x rebound to another shape: the methods broadcast it against a vector of v's)
    if "import dataclasses" not in prog.main:
        prog.main += "\n\n\nimport dataclasses"
    prog.main += USER_CLASSES
    if form == "global":
        return f"AFFINE.score({z}) + np.sum(AFFINE.apply(v)) * AFFINE.norm"
    if form == "built":
        lines.append(f"    uc_layer = Affine(np.tanh(v) * 0.5, s * {ch.choice([0.1, -0.3])})")
        return f"uc_layer.score({z}) + uc_layer.norm * np.sum(np.sin(x))"
    lines.append("    uc_gain = Gain(np.cos(v) * 0.5, np.tanh(s))")
    return f"np.sum(uc_gain.apply({z}) * uc_gain.w)"


def scipy_terms(gen: "Gen", prog: Program) -> None:
    """One more term of ``f``'s value from the multivariate rules (issue 27): a Dirichlet or
    multivariate normal log-density, an n-D convolution of scipy.signal, the eigenvalues or
    eigenvectors of a non-symmetric matrix with real eigenvalues (Gershgorin discs kept apart),
    an array's rows read through ``tuple``/``list``, a tridiagonal system by scipy.linalg's
    ``solve_banded``, or ``np.r_``/``np.c_`` of arrays and numbers. Written as autograd reads them too (its
    convolve takes ``mode=`` full or valid; a covariance built symmetric)."""
    ch = gen.ch
    j = ch.int(0, 2)
    shifted = "np.diag([1.0, 2.0, 3.0]) + 0.1 * np.tanh(x[:, :3])"  # real eigenvalues near 1, 2, 3
    mode = ch.choice(["full", "valid"])
    forms = [
        ("scipy_dirichlet", "stats", f"stats.dirichlet.logpdf(np.exp(x[:, {j}]) / np.sum(np.exp(x[:, {j}])), "
                                     "np.exp(0.3 * v[:3]) + 0.5)"),
        ("scipy_mvn", "stats", "np.sum(stats.multivariate_normal.logpdf(x, 0.5 * v, 0.1 * np.dot(x.T, x) + np.eye(4)))"),
        ("scipy_mvn", "stats", f"stats.multivariate_normal.pdf(v, x[{j}] * s, np.eye(4) * (1.0 + s ** 2))"),
        ("scipy_convolve", "signal", f'np.sum(np.sin(signal.convolve(x, np.reshape(v, (2, 2)), mode="{mode}")))'),
        ("scipy_convolve", "signal", f'np.sum(signal.convolve(v * s, x[{j}], mode="{mode}") ** 2)'),
        ("linalg_eig", "", f"np.sum(np.linalg.eig({shifted})[0] * v[:3])"),
        ("linalg_eig", "", f"np.sum(np.linalg.eig({shifted})[1] ** 2 * x[:, 1:])"),
        ("tuple_rows", "", f"np.sum(tuple(x)[{j}] * v)"),
        ("tuple_rows", "", f"np.sum(list(x * s)[{j}] ** 2)"),
    ]
    later = [  # drawn after the forms above, so a seed that does not draw them keeps its program
        ("scipy_banded", "slinalg", "np.sum(slinalg.solve_banded((1, 1), 0.3 * np.tanh(x[:, :3]) + "
                                    "np.array([[0.0], [2.0], [0.0]]), v[:3] * s) ** 2)"),
        ("index_tricks", "", f"np.sum(np.r_[x[{j}], v * s, s] ** 2)"),
        ("index_tricks", "", "np.sum(np.sin(np.c_[x.T, v, s * v]))"),
    ]
    tag = ch.choice(sorted({f[0] for f in forms}))  # each family equally often
    tag, module, term = ch.choice([f for f in forms if f[0] == tag])
    if ch.bool(30):
        tag = ch.choice(sorted({f[0] for f in later}))
        tag, module, term = ch.choice([f for f in later if f[0] == tag])
    if module:
        prog.imports.add(module)
    # bound first thing in f (its body may rebind x, v and s), read by f's last return
    head, sep, rest = prog.main.partition("\n\n\n")  # f comes first: its last line returns
    lines = head.split("\n")
    assert lines[-1].startswith("    return "), lines[-1]
    lines[-1] += " + scipy_term"
    lines.insert(2 if lines[1].startswith('    """') else 1, f"    scipy_term = {term}")
    prog.main = "\n".join(lines) + sep + rest
    gen.tag("scipy_terms", tag)


def star_arguments(gen: "Gen", prog: Program) -> None:
    """``f_star``: ``f`` with its differentiated arguments passed through ``*xs`` in a drawn
    order (read by index or unpacked), ``flag`` before them or keyword-only after them; the
    test differentiates it with argnums counting into ``*xs`` (``prog.star``: the order, and
    where ``flag`` is)."""
    ch = gen.ch
    order = ["x", "v", "s"]
    for i in range(2, 0, -1):
        j = ch.int(0, i)
        order[i], order[j] = order[j], order[i]
    keyword = ch.bool(50)
    params = "*xs, flag" if keyword else "flag, *xs"
    lines = [f"def f_star({params}):"]
    if ch.bool(50):
        lines.append(f"    {', '.join(f'{n}_in' for n in order)} = xs")
        reads = {n: f"{n}_in" for n in order}
        gen.tag("star_unpack")
    else:
        reads = {n: f"xs[{order.index(n)}]" for n in order}
    lines.append(f"    return f({reads['x']}, {reads['v']}, {reads['s']}, flag)")
    prog.main += "\n\n\n" + "\n".join(lines)
    prog.star = (tuple(order), keyword)
    gen.tag("star_args", "star_args_decorator")
    if keyword:
        gen.tag("keyword_only")
    else:  # the Hessian's routes take no keyword-only arguments yet
        gen.tag("star_args_second_order")


def _tree_node(ch: Chooser, leaves: list, gen: "Gen") -> tuple:
    """A random container of ``leaves`` (names), nested: ``(kind, [(key, child)...])`` with a
    leaf a str."""
    if len(leaves) == 1 and ch.bool(60):
        return leaves[0]
    kind = ch.choice(["dict", "list", "tuple", "namedtuple", "dataclass"])
    gen.tag(f"tree_{kind}")
    groups, rest = [], list(leaves)
    while rest:
        take = ch.int(1, len(rest))
        groups.append(rest[:take])
        rest = rest[take:]
    children = [_tree_node(ch, g, gen) for g in groups]
    if kind == "dict" and len(children) > 1 and ch.bool(50):  # keys not inserted in sorted order
        gen.tag("tree_dict_unsorted")
        return kind, list(zip([f"k{len(children) - 1 - i}" for i in range(len(children))], children))
    keys = [f"k{i}" for i in range(len(children))] if kind == "dict" else \
        [f"f{i}" for i in range(len(children))] if kind in ("namedtuple", "dataclass") else \
        list(range(len(children)))
    return kind, list(zip(keys, children))


def _tree_display(node) -> str:
    if isinstance(node, str):
        return node
    kind, items = node
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {_tree_display(c)}" for k, c in items) + "}"
    if kind in ("namedtuple", "dataclass"):  # the classes tree_arguments defines, by arity
        name = ("Record" if kind == "namedtuple" else "Box") + str(len(items))
        return f"{name}(" + ", ".join(_tree_display(c) for _, c in items) + ")"
    inner = ", ".join(_tree_display(c) for _, c in items)
    return f"[{inner}]" if kind == "list" else f"({inner}{',' if len(items) == 1 else ''})"


def _tree_reads(node, text: str, lines: list, gen: "Gen", ch: Chooser) -> dict:
    """leaf name -> an expression reading it from ``text``: constant keys and indices, or (for
    a list or tuple of leaves) one unpacking statement added to ``lines``."""
    if isinstance(node, str):
        return {node: text}
    kind, items = node
    if kind in ("list", "tuple") and all(isinstance(c, str) for _, c in items) and ch.bool(40):
        names = [f"{c}_read" for _, c in items]
        lines.append(f"    {', '.join(names)}{',' if len(names) == 1 else ''} = {text}")
        gen.tag("tree_unpack")
        return {c: n for (_, c), n in zip(items, names)}
    walked = _tree_walk(node, text, lines, gen, ch)
    if walked is not None:
        return walked
    out = {}
    for key, child in items:
        read = f"{text}.{key}" if kind in ("namedtuple", "dataclass") else f"{text}[{key!r}]"
        out.update(_tree_reads(child, read, lines, gen, ch))
    return out


def _tree_walk(node, text: str, lines: list, gen: "Gen", ch: Chooser):
    """leaf name -> a name it is read into by a loop over the list, tuple or namedtuple
    ``text`` (``for item in p``, ``enumerate``, ``range(len(p))`` with ``p[i]``, ``reversed``,
    ``zip``, two slices; or ``for a, b in p`` over one of pairs) or the dict ``text`` (its
    ``values()``, ``items()`` or keys, in the order they were inserted), collected into a list
    and unpacked; None where none is drawn (or the node holds other than leaves, or pairs of
    them)."""
    kind, items = node
    if kind not in ("list", "tuple", "namedtuple", "dict") or not ch.bool(35):
        return None
    got = gen.new_name("got")
    if kind == "dict":  # walked in the order its keys were inserted
        if not all(isinstance(c, str) for _, c in items):
            return None
        leaves = [c for _, c in items]
        form = ch.choice(["values", "items", "keys"])
        gen.tag(f"tree_dict_{form}")
        loop = {"values": f"for item in {text}.values():", "items": f"for key, item in {text}.items():",
                "keys": f"for key in {text}:"}[form]
        read = f"{text}[key]" if form == "keys" else "item"
        lines += [f"    {got} = []", f"    {loop}", f"        {got}.append({read})"]
    elif all(isinstance(c, str) for _, c in items):
        leaves = [c for _, c in items]
        form = ch.choice(["iter", "enumerate", "range", "reversed", "zip", "slices"])
        gen.tag(f"tree_loop_{form}")
        lines.append(f"    {got} = []")
        if form == "iter":
            lines += [f"    for item in {text}:", f"        {got}.append(item)"]
        elif form == "enumerate":
            lines += [f"    for i, item in enumerate({text}):", f"        {got}.append({text}[i])"]
        elif form == "range":
            lines += [f"    for i in range(len({text})):", f"        {got}.append({text}[i])"]
        elif form == "reversed":
            lines += [f"    for item in reversed({text}):", f"        {got}.append(item)",
                      f"    {got} = {got}[::-1]"]
        elif form == "zip":
            lines += [f"    for item, again in zip({text}, {text}):",
                      f"        {got}.append(0.5 * (item + again))"]
        else:
            lines += [f"    for item in {text}[:1]:", f"        {got}.append(item)",
                      f"    for item in {text}[1:]:", f"        {got}.append(item)"]
    else:
        arity = {len(c[1]) if isinstance(c, tuple) and c[0] in ("list", "tuple") and
                 all(isinstance(d, str) for _, d in c[1]) else 0 for _, c in items}
        if len(arity) != 1 or 0 in arity:
            return None
        width = arity.pop()
        parts = [f"part{k}" for k in range(width)]
        leaves = [d for _, c in items for _, d in c[1]]
        gen.tag("tree_loop_nested")
        lines += [f"    {got} = []", f"    for {', '.join(parts)}{',' if width == 1 else ''} in {text}:"]
        lines += [f"        {got}.append({part})" for part in parts]
    names = [f"{leaf}_read" for leaf in leaves]
    lines.append(f"    {', '.join(names)}{',' if len(names) == 1 else ''} = {got}")
    return dict(zip(leaves, names))


def tree_arguments(gen: "Gen", prog: Program) -> None:
    """``f_tree(p, flag)``: ``f`` with its differentiated arguments ``x``, ``v``, ``s`` the leaves
    of one pytree ``p`` (``tree_args(x, v, s)`` builds it: dicts, lists and tuples, nested),
    read by constant keys or unpacked; the test compares its gradient tree with ``f``'s."""
    ch = gen.ch
    order = ["x", "v", "s"]
    for i in range(2, 0, -1):  # a drawn order of the leaves
        j = ch.int(0, i)
        order[i], order[j] = order[j], order[i]
    root = _tree_node(ch, order, gen)
    if isinstance(root, str):
        root = ("tuple", [(0, root)])
        gen.tag("tree_tuple")
    lines = ["def f_tree(p, flag):"]
    reads = _tree_reads(root, "p", lines, gen, ch)
    call = f"f({reads['x']}, {reads['v']}, {reads['s']}, "
    lines.append(f"    return {call}flag)")
    # the same with flag a global (jvp and hvp differentiate every primal): its body reads p
    # as f_tree's does, so a namedtuple or dataclass is never passed on whole
    lines += ["", "", "def f_tree_on(p):", *lines[1:-1], f"    return {call}TREE_FLAG)"]
    classes = ["", "", "TREE_FLAG = False", ""]
    for n in (1, 2, 3):
        fields = ", ".join(f"'f{i}'" for i in range(n))
        classes.append(f"Record{n} = collections.namedtuple('Record{n}', [{fields}])")
        classes += ["", "", "@dataclasses.dataclass", f"class Box{n}:"]
        classes += [f"    f{i}: object" for i in range(n)]
        classes.append("")
    builder = f"def tree_args(x, v, s):\n    return {_tree_display(root)}"
    prog.main += "\n\n\nimport collections\nimport dataclasses\n" + "\n".join(classes) + \
        "\n\n" + "\n".join(lines) + "\n\n\n" + builder
    prog.tree = True
    gen.tag("tree_args")


OBJECT_CLASS = """

class Scaler:
    \"\"\"f_obj's object argument (never differentiated): each method gives back what it is
    given, through the object's arrays (a permutation and its transpose, a gain and its
    inverse), so f_obj's gradient is f's.\"\"\"

    def __init__(self, perm, gain):
        self.perm = perm
        self.gain = gain

    def mix(self, z):
        return (z @ self.perm) * self.gain

    def unmix(self, z):
        return (z / self.gain) @ self.perm.T

    def round_trip(self, z):
        return self.unmix(self.mix(z))

    @property
    def unit(self):
        return np.sum(self.gain * self.gain) / np.sum(self.gain ** 2)


def obj_arg():
    return Scaler(np.eye(4)[[PERM]], np.array([GAIN]))"""


def object_arguments(gen: "Gen", prog: Program) -> None:
    """``f_obj``: ``f`` given an object of the module's class ``Scaler`` (``obj_arg()`` builds
    it), at a drawn position among its parameters and not differentiated, whose methods (one
    calling another through ``self``) and property give ``x``, ``v`` and ``s`` back through its
    arrays; the test differentiates ``f_obj`` in ``x``, ``v``, ``s`` (``prog.obj``: its
    parameters, and the object's name) and compares with ``f``'s gradient."""
    ch = gen.ch
    name = ch.choice(["model", "scaler"])
    params = ["x", "v", "s", "flag"]
    params.insert(ch.int(0, 4), name)
    x_form = ch.choice(["round_trip", "unmix_mix"])
    v_form = ch.choice(["round_trip", "unit", "plain"])
    reads = {"x": f"{name}.round_trip(x)" if x_form == "round_trip" else f"{name}.unmix({name}.mix(x))",
             "v": {"round_trip": f"{name}.round_trip(v)", "unit": f"v * {name}.unit", "plain": "v"}[v_form],
             "s": f"s * {name}.unit" if ch.bool() else "s"}
    lines = [f"def f_obj({', '.join(params)}):"]
    if ch.bool():  # the object's values bound first, then f called on them
        lines += [f"    {n}_obj = {reads[n]}" for n in ("x", "v", "s")]
        lines.append("    return f(x_obj, v_obj, s_obj, flag)")
        gen.tag("object_arg_bound")
    else:
        lines.append(f"    return f({reads['x']}, {reads['v']}, {reads['s']}, flag)")
    perm = [0, 1, 2, 3]
    for i in range(3, 0, -1):
        j = ch.int(0, i)
        perm[i], perm[j] = perm[j], perm[i]
    if perm == [0, 1, 2, 3]:
        perm = [1, 3, 0, 2]  # not its own transpose
    gain = [ch.choice([0.5, -1.25, 2.0, 0.75, -0.5]) for _ in range(4)]
    cls = OBJECT_CLASS.replace("[PERM]", repr(perm)).replace("[GAIN]", repr(gain))
    prog.main += cls + "\n\n\n" + "\n".join(lines)
    prog.obj = (tuple(params), name)
    gen.tag("object_arg", f"object_arg_{x_form}", f"object_arg_v_{v_form}")
    object_annotation(gen, prog)


def object_annotation(gen: "Gen", prog: Program) -> None:
    """``f_obj``'s object parameter annotated with its class (``model: Scaler``), which the
    command line reads its methods by (``object_arg_annotated``): drawn after every other
    draw, so the rest of each program is what it was before this production."""
    if not gen.ch.bool(50):
        return
    params, name = prog.obj
    head = f"def f_obj({', '.join(params)}):"
    annotated = f"def f_obj({', '.join(f'{p}: Scaler' if p == name else p for p in params)}):"
    prog.main = prog.main.replace(head, annotated, 1)
    gen.tag("object_arg_annotated")

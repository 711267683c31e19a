"""Random programs in s2sgrad's supported subset, as Python source, for tests/test_property.py.

A program is a module holding ``f(x, v, s, flag)`` (``x`` of shape (3, 4), ``v`` of shape (4,),
``s`` a Python float, ``flag`` a Python bool) and up to two helper functions it calls.

Values stay bounded: every expression carries an upper bound on its magnitude, and an operand that
could grow too large is squashed (``np.tanh``/``np.sin``/``np.cos``) before it is used; ``exp`` only
sees small arguments, ``log``/``sqrt``/fractional powers only positive ones (``1.0 + a * a``), and a
divisor is bounded away from zero. Loop-carried variables are updated by contractions, so a bound
holds for every iteration.

Computed conditions never sit near a tie. Which way each condition goes is drawn when the program
is generated, so the path through the program is known statically (shapes and bounds follow the
taken path). Each condition is a *site* ``value OP threshold``; the program is first run as a
*probe* in which the site records every value it sees and returns the drawn outcome, and the
threshold is then placed ``MARGIN`` beyond all the recorded values on the drawn side. The probe and
the final program therefore take the same path, and a perturbation of the inputs by a
finite-difference step cannot flip any condition.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

import numpy as np

M, V, S, K, R = (3, 4), (4,), (), (3, 1), (3,)
MARGIN = 0.5
BIG = 6.0  # operands above this bound are squashed before arithmetic that multiplies bounds


class Chooser:
    """Random choices, from hypothesis (``data.draw``) or from ``random.Random`` (for replays)."""

    def __init__(self, data=None, seed=None):
        self.data = data
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
    value: str
    op: str
    outcome: bool
    threshold: float = 0.0


@dataclass
class Program:
    helpers: list = field(default_factory=list)  # source blocks
    main: str = ""
    sites: list = field(default_factory=list)
    x: np.ndarray = None
    v: np.ndarray = None
    s: float = 0.0
    flag: bool = False

    def render(self, probe: bool) -> str:
        parts = ["import numpy as np\n"]
        if probe:
            parts.append("_probe = None\n")
        text = "\n\n".join(self.helpers + [self.main])
        # a site's value may hold earlier sites (never later ones): replace the later first
        for k, site in reversed(list(enumerate(self.sites))):
            if probe:
                cond = f"_probe({k}, {site.value})"
            else:
                cond = f"{site.value} {site.op} {site.threshold!r}"
            text = text.replace(f"__SITE{k}__", cond)
        return "\n".join(parts) + "\n\n" + text + "\n"

    def set_thresholds(self, seen: dict) -> None:
        """Place each threshold MARGIN beyond every value the probe recorded at its site."""
        for k, site in enumerate(self.sites):
            values = seen.get(k)
            if not values:
                site.threshold = 0.0
                continue
            below = (site.op in (">", ">=")) == site.outcome  # all values must lie above it
            t = min(values) - MARGIN if below else max(values) + MARGIN
            site.threshold = round(float(t), 3)

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


class Gen:
    def __init__(self, ch: Chooser):
        self.ch = ch
        self.prog = Program()
        self.counter = 0
        self.helpers = []  # (name, params [(name, shape)], has_default, result E-shape, bound)
        self.ints = []  # loop indices in scope: (name, max value)
        self.env = {}
        self.reassignable = None  # None: any non-int name; else a set of names
        self.max_depth = 3
        self.in_main = False
        # Names first bound in some arms of an if only (bound on some paths).
        self.partial = set()
        self.in_if = 0

    # ---------------------------------------------------------------- names and sites
    def new_name(self, prefix="t"):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def site(self, value_src):
        k = len(self.prog.sites)
        self.prog.sites.append(Site(value_src, self.ch.choice([">", "<", ">=", "<="]), self.ch.bool()))
        return f"__SITE{k}__", self.prog.sites[-1].outcome

    # ---------------------------------------------------------------- expressions
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
            for idx, sh in self.index_forms(shape):
                if fits(sh, maxshape):
                    options.append(("index", name, idx, sh))
        options.append(("const",))
        if self.ints:
            options.append(("int",))
        pick = self.ch.choice(options)
        if pick[0] == "var":
            shape, bound, _ = self.env[pick[1]]
            return E(pick[1], shape, bound, fresh=False)
        if pick[0] == "index":
            _, name, idx, sh = pick
            return E(f"{name}{idx}", sh, self.env[name][1], fresh=False)
        if pick[0] == "int":
            name, top = self.ch.choice(self.ints)
            c = self.ch.choice([0.5, 0.25, 1.0])
            return E(f"({name} * {c})", S, top * c + 1e-9)
        c = self.ch.choice([0.5, 1.5, 2.0, -0.75, 3.0, 0.1])
        return E(f"({c})" if c < 0 else repr(c), S, abs(c))

    def index_forms(self, shape):
        forms = []
        if shape == M:
            forms = [("[0]", V), ("[-1]", V), ("[1:]", (2, 4)), ("[:, 1]", R), ("[:, -1:]", K),
                     ("[1, 2]", S), ("[:2, 1:3]", (2, 2))]
            forms += [(f"[{n}]", V) for n, top in self.ints if top <= 2]
            forms += [(f"[:, {n}]", R) for n, top in self.ints if top <= 3]
        elif shape == V:
            forms = [("[0]", S), ("[1:]", (3,)), ("[-1]", S), ("[::2]", (2,))]
            forms += [(f"[{n}]", S) for n, top in self.ints if top <= 3]
        elif shape == R:
            forms = [("[0]", S), ("[1:]", (2,)), ("[:, None]", K)]
        elif shape == K:
            forms = [("[:, 0]", R), ("[0]", (1,))]
        elif len(shape) >= 1:
            forms = [("[0]", shape[1:])]
        return forms

    def expr(self, maxshape, depth) -> E:
        if depth <= 0:
            return self.leaf(maxshape)
        kinds = ["leaf", "binop", "binop", "binop", "div", "pow", "neg", "unary", "unary", "unary",
                 "reduce", "maximum"]
        if self.helpers:
            kinds.append("call")
        if depth >= 2:
            kinds.append("ifexp")
        kind = self.ch.choice(kinds)
        d = depth - 1
        if kind == "leaf":
            return self.leaf(maxshape)
        if kind == "binop":
            op = self.ch.choice(["+", "-", "*"])
            a = self.expr(maxshape, d)
            b = self.expr(maxshape, d)
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
            return E(f"({a.src} / {den})", shape, a.bound * 2.0)
        if kind == "pow":
            a = self.expr(maxshape, d)
            form = self.ch.choice(["int", "int", "float", "neg"])
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
            return E(f"(-{a.src})", a.shape, a.bound)
        if kind == "unary":
            a = self.expr(maxshape, d)
            fn = self.ch.choice(["sin", "cos", "tanh", "exp", "log", "sqrt", "abs"])
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
            bound = a.bound * (size(a.shape) // max(size(shape), 1) if fn == "sum" else 1)
            return self.squash(E(f"np.{fn}({a.src}{kw})", shape, bound), 30.0)
        if kind == "maximum":
            a = self.expr(maxshape, d)
            c = self.ch.choice([0.3, -0.2, 0.05, 1.2])
            fn = self.ch.choice(["maximum", "minimum"])
            order = self.ch.bool()
            args = f"{a.src}, {c}" if order else f"{c}, {a.src}"
            return E(f"np.{fn}({args})", a.shape, max(a.bound, abs(c)))
        if kind == "call":
            return self.call(maxshape, d)
        # conditional expression: both arms must be valid code, only the taken one runs
        cond, outcome = self.condition(d)
        a = self.expr(maxshape, d)
        b = self.expr(maxshape, d)
        taken = a if outcome else b
        return E(f"({a.src} if {cond} else {b.src})", taken.shape, taken.bound, fresh=False)

    def condition(self, depth, nest=0):
        """A condition source and the outcome it is drawn to have."""
        forms = ["sum", "mean", "scalar", "max"]
        if self.in_main:
            forms.append("flag")
        if nest == 0:
            forms += ["and", "or", "not"]
        form = self.ch.choice(forms)
        if form == "flag":
            return ("flag", self.prog.flag) if self.ch.bool() else ("not flag", not self.prog.flag)
        if form in ("and", "or", "not"):
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
            return f"({a.src} + np.zeros({shape[0] if len(shape) == 1 else shape}))"
        return a.src

    def call(self, maxshape, depth) -> E:
        options = [h for h in self.helpers if fits(h["shape"], maxshape)]
        if not options:
            return self.leaf(maxshape)
        h = self.ch.choice(options)
        args = []
        for pname, pshape in h["params"]:
            args.append(self.fit_arg(pshape, depth))
        if h["default"]:
            how = self.ch.choice(["omit", "keyword", "positional"])
            c = self.squash(self.expr(S, depth), 1.0).src
            if how == "keyword":
                args.append(f"c={c}")
            elif how == "positional":
                args.append(c)
        if len(h["params"]) >= 2 and "=" not in args[-1] and self.ch.bool(30):
            args[1] = f"{h['params'][1][0]}={args[1]}"
            args = args[:2] + [a if "=" in a else f"c={a}" for a in args[2:]]
        return E(f"{h['name']}({', '.join(args)})", h["shape"], h["bound"], fresh=False)

    # ---------------------------------------------------------------- statements
    def targets(self):
        names = [n for n in self.env if n not in ("flag",)]
        if self.reassignable is not None:
            names = [n for n in names if n in self.reassignable]
        return names

    def unfresh(self, e: E):
        """``e`` may be (a view of) a name it mentions: no ``+=`` on those names any more, as
        numpy would then change both."""
        if not e.fresh:
            for name in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", e.src):
                if name in self.env:
                    shape, bound, _ = self.env[name]
                    self.env[name] = (shape, bound, False)

    def assign(self, lines, ind, name, e: E):
        lines.append(f"{ind}{name} = {e.src}")
        self.unfresh(e)
        self.env[name] = (e.shape, e.bound, e.fresh)
        if self.reassignable is not None:
            self.reassignable.add(name)

    def statement(self, lines, ind, depth_left, top=False):
        kinds = ["assign", "assign", "reassign", "augment", "unpack", "if"]
        if depth_left > 0:
            kinds.append("for")
        kind = self.ch.choice(kinds)
        maxshape = self.ch.choice([M, M, V, V, S, K, R])
        if kind == "reassign" and self.targets():
            name = self.ch.choice(self.targets())
            self.assign(lines, ind, name, self.squash(self.expr(maxshape, self.ch.int(1, self.max_depth)), 30.0))
        elif kind == "augment" and any(self.env[n][2] for n in self.targets()):
            name = self.ch.choice([n for n in self.targets() if self.env[n][2]])
            shape, bound, fresh = self.env[name]
            op = self.ch.choice(["+=", "-=", "*=", "/="])
            e = self.expr(shape, self.ch.int(1, 2))
            if op in ("+=", "-="):
                e = self.squash(e, 30.0)
                bound = bound + e.bound
                src = e.src
            elif op == "*=":
                src = self.ch.choice(["np.cos({})", "np.tanh({})", "np.sin({})"]).format(e.src)
            else:
                e = self.squash(e)
                src = f"(1.0 + {e.src} * {e.src})"
            lines.append(f"{ind}{name} {op} {src}")
            self.env[name] = (shape, bound, fresh)
        elif kind == "unpack":
            a = self.squash(self.expr(maxshape, self.ch.int(1, 2)), 30.0)
            b = self.squash(self.expr(self.ch.choice([M, V, S]), self.ch.int(1, 2)), 30.0)
            n1, n2 = self.new_name(), self.new_name()
            lines.append(f"{ind}{n1}, {n2} = {a.src}, {b.src}")
            for n, e in ((n1, a), (n2, b)):
                self.unfresh(e)
                self.env[n] = (e.shape, e.bound, e.fresh)
                if self.reassignable is not None:
                    self.reassignable.add(n)
        elif kind == "if":
            self.if_statement(lines, ind, depth_left)
        elif kind == "for":
            self.for_statement(lines, ind, depth_left)
        else:
            self.assign(lines, ind, self.new_name(),
                        self.squash(self.expr(maxshape, self.ch.int(1, self.max_depth)), 30.0))

    def block(self, lines, ind, depth_left, n):
        for _ in range(n):
            self.statement(lines, ind, depth_left)

    def if_statement(self, lines, ind, depth_left):
        """if / elif / else; the environment afterwards is the taken branch's."""
        arms = self.ch.int(1, 3)  # 1: if, 2: if/else, 3: if/elif/else
        start_env = dict(self.env)
        start_re = None if self.reassignable is None else set(self.reassignable)
        taken_env, taken_re, decided = None, None, False
        arm_names = []
        for arm in range(arms):
            self.env = dict(start_env)
            self.reassignable = None if start_re is None else set(start_re)
            if arm == 0:
                cond, out = self.condition(1)
                lines.append(f"{ind}if {cond}:")
            elif arm == arms - 1 and arms > 1:
                cond, out = None, True
                lines.append(f"{ind}else:")
            else:
                cond, out = self.condition(1)
                lines.append(f"{ind}elif {cond}:")
            self.in_if += 1
            self.block(lines, ind + "    ", depth_left - 1, self.ch.int(1, 2))
            self.in_if -= 1
            arm_names.append(set(self.env))
            if out and not decided:
                decided = True
                taken_env, taken_re = self.env, self.reassignable
        if not decided:  # no arm ran
            taken_env, taken_re = start_env, start_re
        # names bound in the taken arm only stay readable: they are bound on the path that runs
        self.env, self.reassignable = taken_env, taken_re
        everywhere = set.intersection(*arm_names) if arms > 1 else set(start_env)
        self.partial.update(n for n in self.env if n not in start_env and n not in everywhere)

    def for_statement(self, lines, ind, depth_left):
        k = self.ch.int(1, 3)
        idx = "i" if not self.ints else "j"
        if any(n == idx for n, _ in self.ints):
            idx = self.new_name("i")
        # carried variables: new accumulators, or existing names this context may reassign
        jump = self.ch.choice(["continue", "break"]) if k > 1 and self.ch.bool(25) else None
        carried = []
        for _ in range(self.ch.int(1, 2)):
            existing = [n for n in self.targets() if n not in carried]
            if existing and self.ch.bool(40):
                carried.append(self.ch.choice(existing))
            else:
                name = self.new_name("acc")
                init = self.ch.choice(["0.0", "expr"])
                if init == "0.0":
                    self.assign(lines, ind, name, E("0.0", S, 0.0))
                else:
                    e = self.squash(self.expr(self.ch.choice([M, V, S]), 2), 6.0)
                    self.assign(lines, ind, name, e)
                carried.append(name)
        forms = {}
        for name in carried:
            shape, b0, fresh = self.env[name]
            form = self.ch.choice(["contract", "sin", "cos_mul"] + (["augment"] if fresh else []))
            bound = {"contract": max(b0, 2.0), "sin": max(b0, 1.0), "cos_mul": b0, "augment": b0 + k}[form]
            forms[name] = form
            self.env[name] = (shape, bound, fresh if form in ("augment", "cos_mul") else True)
        lines.append(f"{ind}for {idx} in range({k}):")
        body = ind + "    "
        outer_re = self.reassignable
        self.reassignable = set()
        self.ints.append((idx, k - 1))
        n_before = len(lines)
        self.block(lines, body, depth_left - 1, self.ch.int(0, 2))
        if jump:
            lines.append(f"{body}if {idx} == {self.ch.int(0, k - 1)}:")
            lines.append(f"{body}    {jump}")
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
        assert len(lines) > n_before or carried
        # a name first bound in the body stays readable after the loop: the body runs at least
        # once and every statement in it comes before the loop's break/continue
        self.ints.pop()
        self.reassignable = outer_re
        if outer_re is not None:
            outer_re.update(carried)

    # ---------------------------------------------------------------- functions
    def helper(self, index):
        name = f"helper{index}"
        nparams = self.ch.int(1, 2)
        params = [(p, self.ch.choice([M, V, S])) for p in ("a", "b")[:nparams]]
        default = self.ch.bool(40)
        saved = (self.env, self.reassignable)
        self.env = {p: (shape, 2.0, False) for p, shape in params}
        saved_partial, self.partial = self.partial, set()
        if default:
            self.env["c"] = (S, 1.0, False)
        sig = ", ".join(p for p, _ in params) + (", c=0.5" if default else "")
        lines = [f"def {name}({sig}):"]
        self.reassignable = None
        self.block(lines, "    ", 1, self.ch.int(0, 2))
        e = self.squash(self.expr(self.ch.choice([M, V, S]), self.ch.int(1, 3)), 30.0)
        lines.append(f"    return {e.src}")
        self.partial = saved_partial
        self.env, self.reassignable = saved
        self.helpers.append(dict(name=name, params=params, default=default, shape=e.shape, bound=e.bound))
        self.prog.helpers.append("\n".join(lines))

    def program(self) -> Program:
        ch = self.ch
        seed = ch.int(0, 2**16)
        rng = np.random.default_rng(seed)
        self.prog.x = np.round(rng.uniform(-1, 1, M), 3)
        self.prog.v = np.round(rng.uniform(-1, 1, V), 3)
        self.prog.s = round(float(rng.uniform(-1, 1)), 3)
        self.prog.flag = ch.bool()
        for index in range(ch.int(0, 2)):
            self.helper(index + 1)
        self.env = {"x": (M, 1.0, False), "v": (V, 1.0, False), "s": (S, 1.0, False)}
        self.reassignable = None
        self.in_main = True
        lines = ["def f(x, v, s, flag):"]
        for n in range(ch.int(1, 5)):
            # an early return on a computed condition (taken or not, as drawn)
            if n > 0 and ch.bool(15):
                cond, _ = self.condition(1)
                e = self.expr(M, 2)
                lines.append(f"    if {cond}:")
                lines.append(f"        return np.sum({e.src})")
            self.statement(lines, "    ", 2, top=True)
        e = self.expr(M, ch.int(1, 3))
        last = [n for n in self.env if n not in ("x", "v", "s")]
        tail = f" + np.sum({ch.choice(last)})" if last and ch.bool(70) else ""
        lines.append(f"    return np.sum({e.src}){tail}")
        self.prog.main = "\n".join(lines)
        return self.prog


def generate(ch: Chooser) -> Program:
    return Gen(ch).program()

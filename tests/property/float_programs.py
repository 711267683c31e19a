"""Random functions of two Python floats (``f(a, b, n)``), for grad's forward mode of two floats
(calls.FORWARD_MOST, mode "fwd_numbers"): straight-line statements, ``+ - * /`` and ``**``,
unary minus, ``math.sin/cos/tanh/exp/sqrt/log`` on safe domains, augmented assignment, a module
global float, ``if``/``else`` on computed conditions, conditional expressions, ``for _ in
range(n)`` and ``while i < n`` loops carrying values (nested once), tuple unpacking, Python's
``max``/``min`` and ``abs`` of numbers. With ``arrays=True`` one statement goes through an array
(``np.sum(np.sin((t + a) * W))``, ``W`` a global array): there forward mode is refused and the
sweeps run.

``float_program(seed, arrays)`` -> ``(source, tags)``: a module's text and the productions used.
"""

from __future__ import annotations

import random

_UNARY = (
    ("math.sin({})", "sin"), ("math.cos({})", "cos"), ("math.tanh({})", "tanh"),
    ("math.exp(math.sin({}))", "exp"), ("math.sqrt(1.0 + {0} * {0})", "sqrt"),
    ("math.log(2.0 + math.sin({}))", "log"), ("({}) ** 2", "square"), ("-({})", "neg"),
    ("abs({})", "abs"),
)
_BINARY = (
    ("{0} + {1}", "add"), ("{0} - {1}", "sub"), ("{0} * {1}", "mul"),
    ("{0} / (1.5 + {1} * {1})", "div"), ("max({0}, {1})", "max"), ("min({0}, {1})", "min"),
    ("{0} * SCALE", "global"),
)


class _Writer:
    def __init__(self, rng: random.Random, arrays: bool) -> None:
        self.rng = rng
        self.names = ["a", "b"]
        self.lines: list = []
        self.tags: set = set()
        self.count = 0
        self.arrays = arrays

    def fresh(self) -> str:
        self.count += 1
        return f"t{self.count}"

    def operand(self) -> str:
        if self.rng.random() < 0.15:
            return repr(round(self.rng.uniform(-1.5, 1.5), 2))
        return self.rng.choice(self.names)

    def expr(self, depth: int = 2) -> str:
        roll = self.rng.random()
        if depth == 0 or roll < 0.25:
            return self.operand()
        if roll < 0.6:
            template, tag = self.rng.choice(_UNARY)
            self.tags.add(tag)
            return template.format(self.expr(depth - 1))
        if roll < 0.9:
            template, tag = self.rng.choice(_BINARY)
            self.tags.add(tag)
            return template.format(self.expr(depth - 1), self.expr(depth - 1))
        self.tags.add("ifexp")
        return f"({self.expr(depth - 1)} if {self.operand()} > {self.operand()} else {self.expr(depth - 1)})"

    def statement(self, indent: str, depth: int) -> None:
        roll = self.rng.random()
        if roll < 0.45 or len(self.names) < 3 or (roll >= 0.7 and depth >= 2):
            name = self.fresh()
            self.lines.append(f"{indent}{name} = {self.expr()}")
            self.names.append(name)
        elif roll < 0.6:
            name = self.rng.choice(self.names[2:])
            op = self.rng.choice(("+=", "-=", "*="))
            self.tags.add("augmented")
            value = self.expr(1) if op != "*=" else f"math.cos({self.expr(1)})"
            self.lines.append(f"{indent}{name} {op} {value}")
        elif roll < 0.7:
            first, second = self.fresh(), self.fresh()
            self.tags.add("unpack")
            self.lines.append(f"{indent}{first}, {second} = {self.expr(1)}, {self.expr(1)}")
            self.names += [first, second]
        elif roll < 0.8 and depth < 2:
            self.tags.add("if")
            name = self.rng.choice(self.names[2:])
            self.lines.append(f"{indent}if {self.expr(1)} > {self.operand()}:")
            self.lines.append(f"{indent}    {name} = {self.expr()}")
            self.lines.append(f"{indent}else:")
            self.lines.append(f"{indent}    {name} = {self.expr()}")
        else:
            self.loop(indent, depth)

    def loop(self, indent: str, depth: int) -> None:
        carried = self.rng.choice(self.names[2:])
        counter = f"i{depth}"
        looping_while = self.rng.random() >= 0.5
        if not looping_while:
            self.tags.add("for")
            self.lines.append(f"{indent}for _ in range(n):")
        else:
            self.tags.add("while")
            self.lines.append(f"{indent}{counter} = 0")
            self.lines.append(f"{indent}while {counter} < n:")
        inner = indent + "    "
        known = list(self.names)
        for _ in range(self.rng.randint(1, 3)):
            self.statement(inner, depth + 1)
        # the carried value changes each step, bounded: a contraction plus a bounded term
        self.lines.append(f"{inner}{carried} = 0.6 * {carried} + 0.3 * math.sin({self.expr(1)})")
        if looping_while:
            self.lines.append(f"{inner}{counter} += 1")
        self.names = known  # names bound inside may not be bound when the loop runs no step

    def program(self, statements: int) -> str:
        for _ in range(statements):
            self.statement("    ", 0)
        if self.arrays:
            self.tags.add("array")
            name = self.fresh()
            varied = f"({self.rng.choice(self.names)} + {self.rng.choice('ab')})"  # varies with a or b
            self.lines.append(f"    {name} = np.sum(np.sin({varied} * W))")
            self.names.append(name)
        result = " + ".join(self.rng.sample(self.names, min(3, len(self.names))))
        body = "\n".join(self.lines)
        return ("import math\n\nimport numpy as np\n\nSCALE = 0.75\nW = np.linspace(0.2, 1.1, 5)\n\n\n"
                f"def f(a, b, n):\n{body}\n    return {result}\n")


def float_program(seed: int, arrays: bool = False) -> tuple:
    """``(source, tags)`` of a random module defining ``f(a, b, n)`` on two floats."""
    writer = _Writer(random.Random(seed), arrays)
    source = writer.program(writer.rng.randint(3, 7))
    return source, frozenset(writer.tags)

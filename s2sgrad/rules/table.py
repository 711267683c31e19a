"""The derivative table: Rule (a signature plus one template per differentiable parameter) and RuleTable.

A reverse rule reads like the code it produces. In a template, ``g`` is the adjoint of the output,
``ans`` the output, each parameter name the value passed for it; ``np`` is numpy and ``s2s`` the
runtime helpers (s2sgrad.runtime). The transformer, not the rule, decides ``=`` versus
accumulation, and unbroadcasts the contributions of elementwise rules to their operand's shape.

A rule may also state its forward-mode (tangent) templates, one per parameter, where ``t`` is that
parameter's tangent. Without them, forward mode derives the tangent from the rule's kind:
- ``linear``: the parameters the function is linear in, each with the others held fixed (a
  product is linear in each factor; a ``*operands`` parameter in each operand), and in the items
  of a sequence passed to one of them together (``np.stack([a, b])``): the tangent is the same
  call with a varied argument replaced by its tangent (a sequence by the sequence of its items'
  tangents, zeros for the constant ones), summed over the varied arguments;
- ``elementwise``: the reverse template with ``g`` replaced by ``t``, which is right only for a
  holomorphic function (or a real one); functions of complex numbers that are not (``real``,
  ``conj``, ``abs``, ``angle``) state theirs.
A rule with neither says why in ``reverse_only``. The other facts the analyses ask: ``reduction``
(``"sum"``, ``"mean"``, ``"extremum"`` for max/min, ``"other"``: a call on the whole array gives
one number), ``algebra`` (the identity the shift-invariance proof of analyze/invariance.py reads:
``"add"``, ``"sub"``, ``"mul"``, ``"div"``, ``"neg"``, ``"exp"``, ``"log"``; ``"select"``: a choice of
two values by a condition, ``np.where``; ``"norm"``: the 2-norm of all of its operand by default,
``np.linalg.norm``, whose square compositions.py reads as one function) and ``view``.
``joint_jvp``: a join (``lst + [item]``, ``np.append``) is linear in its parameters together, not
each with the others fixed: its tangent is this template, where each parameter stands for its
tangent (zeros when it does not vary; itself when the rule is constant in it).
``together``: ``((param, ...), template)``: the adjoints of several parameters from one call that
shares their work (``np.linalg.solve``'s two adjoints share one solve with the transposed
matrix): the template gives a tuple, one adjoint per named parameter in that order; the reverse
sweep writes it where two or more of them need an adjoint (``a_bar, b_bar = ...``), and each
parameter's own template where one does.
``constant_in``: parameters the value does not vary with where it is differentiable (one read
only for its shape, a mask, the argument an extremum was taken of): neither mode gives them a
derivative, and an argument there may carry one (the runtime helpers' adjoints are so).

A product may state ``step_sums``: per factor, the template of the sum of a loop's contributions
to that factor when it is the same in every iteration (a weight matrix), from the lists of the
upstream adjoints (``gs``) and of the other factor (``others``) the backward loop collected, so
one matrix product after the loop replaces one per iteration, whichever side the factor is on.
It may also name, per factor, the rule of its ``row_products``: the primitive that computes a
loop's products with the rows ``a[t]`` of a loop-invariant array there and a loop-invariant other
factor all at once before the loop (``s2s.rows_matmul(a, n, b)``: ``a[t] @ b`` for ``t < n``).

``outputs``: a function that returns several values (``np.linalg.eigh`` gives ``w, v``) names
them (``("w", "v")``; ``("*parts",)`` for a list of any length, ``np.split``). Its templates read
``g`` as the sequence of the outputs' adjoints (``g[1]``: the second output's; an output nothing
reads has a zero adjoint, never a missing one) and ``ans`` as the sequence of the outputs; its
tangent templates give one tangent per output, as a tuple display ``(w_t, v_t)``. Where the
result is unpacked (``w, v = np.linalg.eigh(a)``) the builders substitute the displays of the
targets' adjoints and of the targets, so ``g[1]`` reads ``v_bar`` itself; where it is kept whole
(``res = np.linalg.qr(a)``) they read its one name, indexed at run time.

``batched``: per parameter, the template of the call with a batched argument there (``t``: many
tangents stacked on a leading axis, the other parameters as given), which returns the results
for each stacked alike (a helper of runtime/batching.py): how a Hessian's tangent code carries
all its columns at once (differentiate/batching.py). An elementwise rule needs none: its
operands are aligned to broadcast as one column does.
"""

from __future__ import annotations

import builtins
import difflib
import functools
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Callable, Iterable, Mapping, Optional

import libcst as cst
import numpy as np
import libcst.matchers as m

from .. import dims, runtime
from .writes import UFUNC_AT, Write, is_ufunc_method, out_position
from .nondiff import (BROADCASTING, EXACT_IDENTITIES, INDEX_WRITES, INVERSE, INVERSE_READERS, LOWER_TRIANGLE,
                      MATRIX_TRANSPOSE, REVERSING_AXES, SCANS, STACKING, LIBRARY_NAMESPACES, NONDIFF_NAMESPACES,
                      SCALAR_NAMESPACES, SCALAR_VALUED, SHAPE_KEEPING, SHAPE_MAKING, SQUARE_MAKING)

POSITIONAL = "positional"
VARARGS = "varargs"
KEYWORD = "keyword"

TEMPLATE_GLOBALS = frozenset({"np", "s2s", "math"}) | frozenset(dir(builtins))


@dataclass(frozen=True)
class RuleParam:
    name: str
    kind: str
    default: Optional[str] = None  # code of the default, None when required


@dataclass(frozen=True)
class Rule:
    """A reverse rule for the function ``name``.

    ``vjps`` maps a parameter name to the template of its adjoint contribution. ``elementwise``
    means each contribution has the broadcast shape of the output and is summed back to the operand.
    ``jvps`` (optional) maps a parameter name to the template of its tangent contribution.
    ``view``: the result may share memory with the first argument (a slice, a reshape, ``.T``), so
    an in-place update of either changes the other. ``linear``, ``reduction``, ``algebra`` and
    ``reverse_only``: the module docstring.
    """

    name: str
    params: tuple
    vjps: tuple  # ((param, template code), ...)
    elementwise: bool = False
    jvps: tuple = ()  # ((param, tangent template code), ...): forward mode's own templates
    view: bool = False
    linear: tuple = ()  # names of the parameters the function is linear in (each separately)
    reduction: str = ""
    algebra: str = ""
    reverse_only: str = ""  # why forward mode has no tangent for this function
    array_result: bool = False  # always returns a numpy array (analyses need not prove it)
    methods: tuple = ()  # ndarray members spelling it, first parameter as ``self`` (``x.sum()``)
    fresh_adjoints: bool = False  # its reverse templates make arrays nothing else holds (+= is safe)
    function: str = ""  # a registered gradient: the user's rule(g, ans, *args) generated code calls
    module: str = ""  # the module that function lives in
    step_sums: tuple = ()  # ((param, template), ...): a loop's contributions to it, summed at once
    row_products: tuple = ()  # ((param, rule name), ...): per-step products with a row there, at once
    constant_in: tuple = ()  # parameters it reads only for shapes or a piecewise choice: no derivative
    joint_jvp: str = ""  # linear in its parameters together (a join): the tangent, params as tangents
    together: tuple = ()  # ((param, ...), template): several parameters' adjoints from one call
    consumes: tuple = ()  # list parameters it empties as it reads them (frees memory early)
    folds: bool = False  # called on numbers in a template, codegen writes its value instead
    batched: tuple = ()  # ((param, template), ...): the call with batched tangents ``t`` there
    # Python's max/min: a call with more than two arguments is the fold of two-argument calls
    # (the lowering writes ``max(max(a, b), c)``); the text says what to write instead of the
    # one-iterable form (``max(xs)``), which has no rule
    pairwise: str = ""
    outputs: tuple = ()  # several results: their names (``("w", "v")``, ``("*parts",)``)
    # an object whose indexing is this function on the index's items as one tuple (``np.r_[a, b]``
    # is ``s2s.join_r((a, b))``): the lowering writes the call
    indexed: str = ""
    # ((param, template), ...): for a ``*args`` parameter whose template gives every item's
    # adjoint at once, the adjoint of the one item at ``index`` (a name the template reads, the
    # item's position written in): used where some items need no adjoint
    each: tuple = ()
    # another form of call the function takes, written in the form its signature reads: given the
    # source texts of a call's positional arguments, the positional arguments of the same call in
    # that form, or None where the call is not in the other form; each an int (the argument at
    # that position), a constant's code, or ``(helper, (items, ...))``, a runtime helper's call
    # on such items (``np.einsum(a, [0, 1], b, [1, 2])`` is
    # ``np.einsum(s2s.einsum_interleaved('AB,BC', a), a, b)``); the lowering writes it so
    respell: Optional[Callable[[tuple], Optional[tuple]]] = field(default=None, compare=False)
    # the result's shape from the positional operands' shapes where they are known (dims.py):
    # code specialized for a call's array shapes drops what equal shapes make needless
    result_shape: Optional[Callable[..., Optional[tuple]]] = field(default=None, compare=False)
    # the parameter whose value (a length, or a tuple of lengths, or ``*shape``'s lengths) is
    # the result's shape (``np.reshape(a, shape)``): known where the lengths are
    result_lengths: str = ""
    # ((param, ranks, template), ...): the adjoint of ``param`` where the positional operands'
    # ranks are known to be ``ranks`` (code made for a shape signature): plain numpy, no dispatch
    ranked: tuple = ()
    # the adjoint of ``np.log(f(x))`` in ``x`` (``g * np.tanh(x)`` for cosh: f'(x) / f(x), one
    # function), where f's value is read by nothing but the log: the backward sweep then neither
    # divides by f(x) nor keeps it (differentiate/compositions.py)
    log_adjoint: str = ""
    # the parameter whose integer value is the result's first length where it is certainly no
    # more than the first argument's (a loop's per-step products, ``s2s.rows_matmul(a, n, b)``:
    # ``a[t] @ b`` for ``t < n``): the shape analysis reads it (analyze/shapes.py)
    rows_counted: str = ""

    @property
    def registered(self) -> bool:
        """A user's gradient function (register_gradient) rather than templates."""
        return bool(self.function)

    @property
    def several(self) -> bool:
        """Whether the function returns several values (a tuple or a list): ``outputs``."""
        return bool(self.outputs)

    @property
    def tangent_route(self) -> str:
        """How forward mode finds this function's tangent: ``"own"`` (its tangent templates),
        ``"joint"`` (its joint template), ``"linear"``, ``"elementwise"`` (derived from the reverse
        templates), or ``""``."""
        if self.jvps:
            return "own"
        if self.joint_jvp:
            return "joint"
        if self.linear:
            return "linear"
        return "elementwise" if self.elementwise else ""

    def linear_positions(self, count: int) -> frozenset:
        """The positions, among ``count`` positional arguments, of those the function is linear in."""
        out: set = set()
        for index, p in enumerate(self.params):
            if p.name in self.linear and p.kind == POSITIONAL and index < count:
                out.add(index)
            elif p.name in self.linear and p.kind == VARARGS:
                out.update(range(index, count))
        return frozenset(out)

    def param(self, name: str) -> RuleParam:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)


@functools.lru_cache(maxsize=None)
def parse_template(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def _parse_signature(text: str) -> tuple:
    name, _, rest = text.partition("(")
    fn = cst.parse_statement(f"def _({rest}: pass")
    assert isinstance(fn, cst.FunctionDef)
    params = []
    empty = cst.Module([])
    for p in fn.params.posonly_params + fn.params.params:
        default = empty.code_for_node(p.default) if p.default is not None else None
        params.append(RuleParam(p.name.value, POSITIONAL, default))
    if isinstance(fn.params.star_arg, cst.Param):
        params.append(RuleParam(fn.params.star_arg.name.value, VARARGS, None))
    for p in fn.params.kwonly_params:
        default = empty.code_for_node(p.default) if p.default is not None else None
        params.append(RuleParam(p.name.value, KEYWORD, default))
    return name.strip(), tuple(params)


def defvjp(signature: str, *, elementwise: bool = False, jvps: Optional[dict] = None,
           view: bool = False, linear: Iterable[str] = (), reduction: str = "",
           algebra: str = "", reverse_only: str = "", array_result: bool = False,
           methods: Iterable[str] = (), step_sums: Optional[dict] = None,
           row_products: Optional[dict] = None, fresh_adjoints: bool = False,
           constant_in: Iterable[str] = (), joint_jvp: str = "", consumes: Iterable[str] = (),
           folds: bool = False, batched: Optional[dict] = None, outputs: Iterable[str] = (),
           indexed: str = "", each: Optional[dict] = None,
           respell: Optional[Callable[[tuple], Optional[tuple]]] = None, together: tuple = (),
           result_shape: Optional[Callable[..., Optional[tuple]]] = None, ranked: tuple = (),
           result_lengths: str = "", log_adjoint: str = "", rows_counted: str = "",
           **templates: str) -> Rule:
    """A Rule from a signature text (``"numpy.tanh(x)"``) and one template per parameter;
    ``jvps``: forward mode's own templates, per parameter (``t``: its tangent); the other
    keywords are the Rule's fields of the same names."""
    name, params = _parse_signature(signature)
    rule = Rule(name, params, tuple(templates.items()), elementwise, jvps=tuple((jvps or {}).items()),
                view=view, linear=tuple(linear), reduction=reduction, algebra=algebra,
                reverse_only=reverse_only, array_result=array_result, methods=tuple(methods),
                step_sums=tuple((step_sums or {}).items()),
                row_products=tuple((row_products or {}).items()), fresh_adjoints=fresh_adjoints,
                constant_in=tuple(constant_in), joint_jvp=joint_jvp, consumes=tuple(consumes),
                folds=folds, batched=tuple((batched or {}).items()), outputs=tuple(outputs),
                indexed=indexed, each=tuple((each or {}).items()), respell=respell,
                result_shape=result_shape, ranked=tuple(ranked), result_lengths=result_lengths,
                log_adjoint=log_adjoint, rows_counted=rows_counted,
                together=(tuple(together[0]), together[1]) if together else ())
    grouped = set(rule.together[0]) if rule.together else set()
    unknown = (set(rule.linear) | set(rule.constant_in) | grouped | ({rule.rows_counted} - {""})) - \
        {p.name for p in params}
    if unknown:
        raise AssertionError(f"rule {name}: linear or constant in unknown parameters {sorted(unknown)}")
    both = set(rule.constant_in) & (set(rule.linear) | set(templates))
    if both:
        raise AssertionError(f"rule {name}: constant in {sorted(both)}, which have derivatives")
    return rule


def alias(name: str, rule: Rule, *, rename: Optional[dict] = None, methods: Iterable[str] = ()) -> Rule:
    """The same rule under another name (``numpy.absolute`` for ``numpy.abs``), its parameters
    renamed by ``rename``, spelled as the ndarray members ``methods``."""
    if not rename:
        return replace(rule, name=name, methods=tuple(methods))
    params = tuple(RuleParam(rename.get(p.name, p.name), p.kind, p.default) for p in rule.params)
    return replace(rule, name=name, params=params, vjps=_renamed(rule.vjps, rename),
                   jvps=_renamed(rule.jvps, rename), methods=tuple(methods),
                   joint_jvp=_renamed((("", rule.joint_jvp),), rename)[0][1] if rule.joint_jvp else "",
                   together=(tuple(rename.get(p, p) for p in rule.together[0]),
                             _renamed((("", rule.together[1]),), rename)[0][1]) if rule.together else (),
                   step_sums=_renamed(rule.step_sums, rename),
                   batched=_renamed(rule.batched, rename), each=_renamed(rule.each, rename),
                   row_products=tuple((rename.get(p, p), name) for p, name in rule.row_products),
                   linear=tuple(rename.get(p, p) for p in rule.linear),
                   constant_in=tuple(rename.get(p, p) for p in rule.constant_in),
                   ranked=tuple((param, ranks, code) for (param, code), (_, ranks, _) in
                                zip(_renamed(tuple((p, t) for p, _, t in rule.ranked), rename), rule.ranked)))


def method_rules(rule: Rule) -> tuple:
    """The rules of ``rule``'s method spellings: ``ndarray.<member>`` with its first parameter
    named ``self``."""
    first = rule.params[0].name
    return tuple(alias(f"ndarray.{member}", rule, rename={first: "self"}) for member in rule.methods)


def _renamed(templates: tuple, rename: dict) -> tuple:
    out = []
    for param, code in templates:
        node = parse_template(code).visit(_NameSwap(rename))
        out.append((rename.get(param, param), cst.Module([]).code_for_node(node)))
    return tuple(out)


class _NameSwap(cst.CSTTransformer):
    def __init__(self, mapping: dict) -> None:
        self.mapping = mapping

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
        return updated.with_changes(value=self.mapping.get(original.value, original.value))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
        return updated.with_changes(attr=original.attr)

    def leave_Arg(self, original: cst.Arg, updated: cst.Arg) -> cst.Arg:
        return updated.with_changes(keyword=original.keyword)


def template_names(code: str) -> set:
    """Names a template reads (attribute fields and keyword names excluded)."""
    node = parse_template(code)
    attrs = {id(a.attr) for a in m.findall(node, m.Attribute())}
    kws = {id(a.keyword) for a in m.findall(node, m.Arg()) if a.keyword is not None}
    return {n.value for n in m.findall(node, m.Name()) if id(n) not in attrs and id(n) not in kws}


def validate(rule: Rule) -> None:
    """Raise AssertionError when a template names a parameter the rule lacks, reads a name it
    cannot see, or calls a runtime helper that does not exist (checked by the test suite, not
    at import: parsing every template costs a third of a second)."""
    names = {p.name for p in rule.params}
    joint = [(rule.params[0].name, rule.joint_jvp, set())] if rule.joint_jvp else []
    together = [(rule.together[0][0], rule.together[1], {"g", "ans"})] if rule.together else []
    if rule.together and not set(rule.together[0]) <= {p for p, _ in rule.vjps}:
        raise AssertionError(f"rule {rule.name}: parameters together without their own templates")
    for param, code, seeds in [(p, c, {"g", "ans"}) for p, c in rule.vjps] + together + \
            [(p, c, {"t", "ans"}) for p, c in rule.jvps] + joint + \
            [(p, c, {"gs", "others"}) for p, c in rule.step_sums] + \
            [(p, c, {"t"}) for p, c in rule.batched] + \
            ([(rule.params[0].name, rule.log_adjoint, {"g"})] if rule.log_adjoint else []):
        allowed = seeds | names | TEMPLATE_GLOBALS
        if param not in names:
            raise AssertionError(f"rule {rule.name}: template for unknown parameter {param!r}")
        unknown = template_names(code) - allowed
        if unknown:
            raise AssertionError(f"rule {rule.name}: template {code!r} reads unknown {sorted(unknown)}")
        node = parse_template(code)
        for attr in m.findall(node, m.Attribute(value=m.Name("s2s"))):
            if not hasattr(runtime, attr.attr.value):
                raise AssertionError(f"rule {rule.name}: s2s.{attr.attr.value} is not in runtime")


def spoken(name: str) -> str:
    """A qualified name as users write it: ``np.linalg.eigvalsh``, ``.sum`` for ``ndarray.sum``."""
    if name.startswith("numpy."):
        return "np." + name[len("numpy."):]
    if name.startswith("ndarray."):
        return name[len("ndarray"):]
    return name


@dataclass(frozen=True)
class RuleTable:
    """Reverse rules by qualified name, the names whose derivative is zero, and what to write
    instead of a function that has no rule (``instead``: name -> advice, declared by the banners)."""

    rules: Mapping[str, Rule] = field(default_factory=lambda: MappingProxyType({}))
    nondiff: frozenset = frozenset()
    instead: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    writes: Mapping[str, Write] = field(default_factory=lambda: MappingProxyType({}))

    def get(self, name: str) -> Optional[Rule]:
        return self.rules.get(name)

    def write(self, name: str) -> Optional[Write]:
        """What ``name`` writes into an argument (None: it writes nothing): its Write, or, for a
        ``numpy.<ufunc>.at`` without one, a refusal."""
        found = self.writes.get(name)
        if found is None and is_ufunc_method(name, "at"):
            return Write(f"{name}(a, indices, b=None)", "a", why=UFUNC_AT)
        return found

    def out_position(self, name: str) -> Optional[int]:
        """Where library function ``name`` takes ``out`` positionally (None: nowhere)."""
        return out_position(name) if self.is_library(name) or name.startswith("scipy.") else None

    def suggest(self, name: str) -> str:
        """Advice for ``name``, which has no rule: what its banner declares, else the functions
        of the same namespace with a rule and a close name (``eigvals`` -> ``eigvalsh``); "" when
        there is none."""
        if name in self.instead:
            return self.instead[name]
        namespace, _, short = name.rpartition(".")
        siblings = sorted(k.rpartition(".")[2] for k in self.rules
                          if k.rpartition(".")[0] == namespace and k.rpartition(".")[2][:2] == short[:2])
        close = difflib.get_close_matches(short, siblings, n=3, cutoff=0.8)
        if not close:
            return ""
        names = ", ".join(f"`{spoken(f'{namespace}.{c}')}`" for c in close)
        return f"similar names with a rule: {names}"

    @functools.cached_property
    def elementwise(self) -> frozenset:
        """Names of the rules marked elementwise."""
        return frozenset(name for name, rule in self.rules.items() if getattr(rule, "elementwise", False))

    @functools.cached_property
    def _indexed(self) -> Mapping[str, Rule]:
        return MappingProxyType({rule.indexed: rule for rule in self.rules.values() if rule.indexed})

    def indexed_call(self, name: str) -> Optional[Rule]:
        """The rule of the function an indexing of the object ``name`` is (``numpy.r_``: join_r's), or None."""
        return self._indexed.get(name)

    @functools.cached_property
    def complex_valued(self) -> frozenset:
        """Names of the rules that may give complex values or adjoints for real operands (the
        Fourier transforms, and those whose templates match complex dtypes or multiply by ``1j``)."""
        return frozenset(name for name, rule in self.rules.items()
                         if ".fft." in name or any("match_complex" in t or "1j" in t
                                                   for _, t in getattr(rule, "vjps", ())))

    @functools.cached_property
    def views(self) -> frozenset:
        """Names of the rules whose result may share memory with their first argument."""
        return frozenset(name for name, rule in self.rules.items() if getattr(rule, "view", False))

    def differentiable(self, op: str) -> bool:
        """Whether ``op`` can carry a derivative: not a zero-derivative function, not a kept
        verbatim expression (``nondiff``), not a random draw."""
        return op not in self.nondiff and op != "nondiff" and not op.startswith(NONDIFF_NAMESPACES)

    def gives_scalar(self, op: str) -> bool:
        """Whether ``op``'s result is a Python number whatever it is given."""
        return op in SCALAR_VALUED or op.startswith(SCALAR_NAMESPACES)

    def is_library(self, op: str) -> bool:
        """Whether ``op`` names a function of numpy, Python or s2sgrad itself (not of the user)."""
        return op.startswith(LIBRARY_NAMESPACES)

    def gives_array(self, op: str) -> bool:
        """Whether ``op`` always returns a numpy array or numpy scalar: a rule marked so (matrix
        products), or a numpy ufunc (``np.real`` is not one: a float stays a float)."""
        rule = self.rules.get(op)
        return rule is not None and (getattr(rule, "array_result", False) or _is_ufunc(op))

    def joins(self, op: str) -> bool:
        """Whether ``op`` joins a display's items along their first axis (``np.concatenate``
        given no axis): its result's shape is dims.joined's."""
        rule = self.rules.get(op)
        return rule is not None and rule.result_shape is dims.joined

    def scan(self, op: str) -> str:
        """The cumulative function of elementwise binary ``op`` (``operator.mul``:
        ``numpy.cumprod``), by its algebra; "" for any other."""
        rule = self.rules.get(op)
        return SCANS.get(rule.algebra, "") if rule is not None and rule.elementwise else ""

    def exact_identity(self, op: str) -> str:
        """The function making an array of elementwise binary ``op``'s identity, where ``op``
        with it gives each value back bit for bit (``operator.mul``: ``numpy.ones``); ""
        for any other (addition: 0.0 + -0.0 is 0.0)."""
        rule = self.rules.get(op)
        return EXACT_IDENTITIES.get(rule.algebra, "") if rule is not None and rule.elementwise else ""

    def log_of(self, outer: str, inner: str) -> Optional[Rule]:
        """The rule of ``outer(inner(x))`` as one function of ``x``, where ``outer`` is the
        natural log (its algebra) and ``inner``'s rule states the log's adjoint
        (Rule.log_adjoint), else None."""
        log, rule = self.rules.get(outer), self.rules.get(inner)
        if log is None or log.algebra != "log" or len(log.params) != 1 or rule is None or \
                not rule.log_adjoint or len(rule.params) != 1:
            return None
        vjps = ((rule.params[0].name, rule.log_adjoint),)
        if rule.params[0].name != log.params[0].name:
            vjps = _renamed(vjps, {rule.params[0].name: log.params[0].name})
        return replace(log, vjps=vjps, jvps=(), algebra="")

    def function_of(self, op: str) -> str:
        """The numpy function whose method spelling ``op`` is (``ndarray.mean`` -> ``numpy.mean``:
        one rule, the array its first operand, the other operands at the same places), else
        ``op`` itself."""
        return self._functions_of_methods.get(op, op)

    @functools.cached_property
    def _functions_of_methods(self) -> Mapping[str, str]:
        found: dict = {}
        for name in sorted(self.rules):
            if not name.startswith("ndarray."):
                for member in self.rules[name].methods:
                    found.setdefault(f"ndarray.{member}", name)
        return MappingProxyType(found)

    def logistic(self) -> Optional[Rule]:
        """The rule of the logistic function ``1 / (1 + exp(-x))`` (the one rule of algebra
        ``"logistic"``: ``scipy.special.expit``), which its spelled-out chain is read as
        (differentiate/compositions.py); None where the table has none."""
        return self._logistic

    @functools.cached_property
    def _logistic(self) -> Optional[Rule]:
        found = [rule for _, rule in sorted(self.rules.items()) if rule.algebra == "logistic"
                 and rule.elementwise and len(rule.params) == 1]
        return found[0] if found else None

    def squared_norm(self) -> Optional[Rule]:
        """The rule of ``norm(x) ** 2`` as one function of ``x``, the norm given ``x`` alone (the
        one rule of algebra ``"norm"``: ``np.linalg.norm``, whose default is the 2-norm of all of
        ``x``): the sum of ``|x|^2``, whose adjoint ``g * 2.0 * conj(x)`` neither divides by the
        norm nor reads it (differentiate/compositions.py); None where the table has none."""
        return self._squared_norm

    @functools.cached_property
    def _squared_norm(self) -> Optional[Rule]:
        found = [rule for _, rule in sorted(self.rules.items()) if rule.algebra == "norm" and rule.params]
        if not found:
            return None
        x = found[0].params[0].name
        return replace(found[0], vjps=((x, f"g * 2.0 * s2s.complex_conj({x})"),), jvps=(), algebra="")

    def function(self, algebra: str = "", reduction: str = "") -> str:
        """The numpy function (not a method, not an operator) whose rule has this ``algebra``
        (``"select"``: ``numpy.where``) or this ``reduction`` (``"sum"``: ``numpy.sum``); "" where
        none has."""
        return self._functions.get(("algebra", algebra) if algebra else ("reduction", reduction), "")

    @functools.cached_property
    def _functions(self) -> Mapping[tuple, str]:
        """``("algebra", a)`` / ``("reduction", r)`` -> the first numpy function (by name) with it."""
        found: dict = {}
        for name in sorted(self.rules):
            rule = self.rules[name]
            if name.startswith("numpy."):
                for fact in (("algebra", rule.algebra), ("reduction", rule.reduction)):
                    if fact[1]:
                        found.setdefault(fact, name)
        return MappingProxyType(found)

    @staticmethod
    def lower_triangle() -> str:
        """The function making an ``(N, M)`` array of ones at and below a diagonal (``np.tri``)."""
        return LOWER_TRIANGLE

    @staticmethod
    def inverse() -> str:
        """The function giving a matrix's inverse, as generated code calls it (``np.linalg.inv``)."""
        return INVERSE

    @staticmethod
    def inverse_reader(func: str) -> Optional[tuple]:
        """For a runtime helper as generated code calls it (``s2s.solve_vjps``) that reads the
        inverse of one of its arguments: ``(that argument's position, the helper taking the
        inverse given as one more argument)``; else None."""
        return INVERSE_READERS.get(func)

    @staticmethod
    def reverses_axes(op: str) -> bool:
        """Whether ``op``, given an array alone, gives it with its axes reversed (``.T``: a
        matrix's transpose)."""
        return op in REVERSING_AXES

    @staticmethod
    def matrix_transpose() -> str:
        """The function that, given ``(x, -1, -2)``, transposes the matrices of a stack ``x``,
        as generated code calls it (``np.swapaxes``)."""
        return MATRIX_TRANSPOSE

    def is_scan(self, op: str) -> bool:
        """Whether ``op`` is a cumulative function (``numpy.cumsum``): along a given axis, its
        result has its first argument's shape."""
        return op in SCANS.values()

    def stacks(self, op: str) -> bool:
        """Whether ``op``, given a list alone, stacks its items on a new first axis."""
        return op in STACKING

    def keeps_shape(self, op: str) -> bool:
        """Whether ``op``'s result has its first argument's shape (when given no shape)."""
        return op in SHAPE_KEEPING

    def makes_shape(self, op: str) -> bool:
        """Whether ``op``'s result has the shape its first argument gives (``np.zeros(shape)``)."""
        return op in SHAPE_MAKING

    def makes_square(self, op: str) -> bool:
        """Whether ``op(N, M=None)`` makes an ``(N, M)`` array, ``(N, N)`` without ``M`` (``np.eye``)."""
        return op in SQUARE_MAKING

    def index_write(self, op: str) -> bool:
        """Whether ``op`` is an index write ``(x, index, value)`` (its result is ``x`` with
        ``x[index]`` replaced: the same shape, but for a list's slice given another length)."""
        return op in INDEX_WRITES

    def broadcasts(self, op: str) -> bool:
        """Whether ``op``'s result has the broadcast shape of its operands (elementwise)."""
        return op in self.elementwise or op in BROADCASTING

    def array_methods(self) -> frozenset:
        """The ndarray methods the table knows (with a rule or without a derivative): a call of
        one in generated code is numpy's, which changes nothing (passes may drop it unread)."""
        return frozenset(k.split(".", 1)[1] for k in (*self.rules, *self.nondiff)
                         if k.startswith("ndarray."))

    def broadcast_reads(self, code: str) -> frozenset:
        """The names a template reads where they broadcast into its value (operands of an
        operator, arguments of an elementwise numpy function): its value's shape is at least the
        broadcast of theirs. A name read elsewhere (a helper's argument) is not counted."""
        return frozenset(_broadcast_reads(parse_template(code), self))

    def with_rules(self, rules: Iterable[Rule]) -> "RuleTable":
        merged = dict(self.rules)
        for r in rules:
            merged[r.name] = r
        return RuleTable(MappingProxyType(merged), self.nondiff, self.instead, self.writes)


def _broadcast_reads(node: cst.BaseExpression, table: RuleTable) -> Iterable[str]:
    if isinstance(node, cst.Name):
        yield node.value
    elif isinstance(node, cst.BinaryOperation):
        yield from _broadcast_reads(node.left, table)
        yield from _broadcast_reads(node.right, table)
    elif isinstance(node, cst.UnaryOperation):
        yield from _broadcast_reads(node.expression, table)
    elif isinstance(node, cst.Comparison):
        yield from _broadcast_reads(node.left, table)
        for target in node.comparisons:
            yield from _broadcast_reads(target.comparator, table)
    elif isinstance(node, cst.Call) and m.matches(node.func, m.Attribute(value=m.Name("np"))):
        assert isinstance(node.func, cst.Attribute)
        if table.broadcasts(f"numpy.{node.func.attr.value}"):
            for arg in node.args:
                if arg.keyword is None and arg.star == "":
                    yield from _broadcast_reads(arg.value, table)


def _is_ufunc(name: str) -> bool:
    namespace, _, short = name.rpartition(".")
    return namespace == "numpy" and isinstance(getattr(np, short, None), np.ufunc)


def build_table(groups: Iterable[Iterable[Rule]], nondiff: Iterable[str],
                instead: Optional[Mapping[str, str]] = None,
                writes: Iterable[Write] = ()) -> RuleTable:
    rules = {}
    for group in groups:
        for r in (r for declared in group for r in (declared, *method_rules(declared))):
            if r.name in rules:
                raise AssertionError(f"rule {r.name} defined twice")
            rules[r.name] = r
    advice = dict(instead or {})
    for name in advice:
        if name in rules:
            raise AssertionError(f"{name} has a rule and advice instead of one")
    return RuleTable(MappingProxyType(rules), frozenset(nondiff), MappingProxyType(advice),
                     MappingProxyType({w.name: w for w in writes}))

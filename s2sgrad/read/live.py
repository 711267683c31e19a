"""What a live function can see: names -> values through its globals and closure, the functions it
reaches, a fingerprint of what the generated text depends on, and a check that the source read
is the source the function was compiled from.

Takes live function objects; returns dicts, strings or raises TransformError. Never calls user code.
"""

from __future__ import annotations

import dis
import linecache
import textwrap
import types
from typing import Any, Callable, Iterator

from ..errors import Location, TransformError
from .paths import display_path

_LITERALS = (int, float, complex, bool, str, bytes, type(None))
_CHECKED: dict = {}  # id(code) -> (code, what it was checked against): each def checked once


# On a function s2sgrad returned (grad(f), ...): the generated function that computes the same
# value from the same arguments, which s2sgrad reads when it transforms that function again.
ENTRY_ATTR = "__s2sgrad_entry__"

# On a function s2sgrad returned, where it takes pytrees: ``again(args, kwargs)`` -> ``(split, fn,
# out_def)`` for a call with pytree arguments (tree_arguments.Split), ``fn`` the generated function
# computing the same from the split's leaves and ``out_def`` the structure its flat results are
# regrouped into (trees.TreeDef); None where it has none for that call. ``again.fun``: the function
# whose parameters the calls pass (the one transformed).
TREE_ENTRY_ATTR = "__s2sgrad_tree_entry__"


def tree_entry_of(fn: Any) -> Any:
    """``fn``'s ``TREE_ENTRY_ATTR`` (see there), or None."""
    return getattr(fn, TREE_ENTRY_ATTR, None) if isinstance(fn, types.FunctionType) else None


# In a loaded generated module's namespace: the object that keeps it current (write/binding.py).
BINDING_KEY = "__s2sgrad_binding__"


class Deferred:
    """An ``ENTRY_ATTR`` made on first use: ``make()`` returns the generated function (or None
    when there is none, and the function s2sgrad returned is then refused as untransformable)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make
        self._made: Any = None
        self._done = False

    def get(self) -> Any:
        if not self._done:
            self._made, self._done = self._make(), True
        return self._made


def entry_of(fn: Any) -> Any:
    """The generated function ``fn`` (a function s2sgrad returned) stands for, else None."""
    entry = getattr(fn, ENTRY_ATTR, None) if isinstance(fn, types.FunctionType) else None
    return entry.get() if isinstance(entry, Deferred) else entry


def _unwrap(fn: Any) -> Any:
    """What ``fn`` stands for: the function a decorator wrapped (``__wrapped__``), or the
    generated code of a function s2sgrad returned (``ENTRY_ATTR``)."""
    for _ in range(16):
        entry = entry_of(fn)
        if entry is not None:
            fn = entry
        elif hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        else:
            break
    return fn


GENERATED_PREFIX = "<s2sgrad-generated "  # the file name of code s2sgrad generated and loaded


def is_generated(value: Any) -> bool:
    """Whether ``value`` is a function of code s2sgrad generated (write/loader.py names its file)."""
    code = getattr(value, "__code__", None)
    return code is not None and code.co_filename.startswith(GENERATED_PREFIX)


def readable(fn: Any) -> Any:
    """``fn``, or the generated function it stands for when s2sgrad made it (a transformation
    of a transformation reads the first one's generated code)."""
    entry = entry_of(fn)
    return readable(entry) if entry is not None else fn


def live_names(fn: types.FunctionType) -> dict:
    """The values a live function can see by name: its globals, overlaid by its closure cells."""
    names = dict(fn.__globals__)
    if fn.__closure__:
        for var, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                names[var] = cell.cell_contents
            except ValueError:  # empty cell: defined later in the enclosing scope
                continue
    return names


def names_read(code: types.CodeType) -> list:
    """Every global, attribute and free name ``code`` (and code nested in it) reads, sorted."""
    found = set(code.co_names) | set(code.co_freevars)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found |= set(names_read(const))
    return sorted(found)


def python_function(value: Any) -> Any:
    """``value`` unwrapped when it is a plain Python function whose source s2sgrad may read (not
    numpy's, scipy's, math's or s2sgrad's own), else None."""
    value = _unwrap(value)
    if not isinstance(value, types.FunctionType):
        return None
    module = getattr(value, "__module__", "") or ""
    return None if module.split(".")[0] in {"numpy", "s2sgrad", "scipy", "math"} else value


def _user_module(value: Any) -> bool:
    """True for a module whose functions s2sgrad may read (not numpy's, scipy's, math's or its own)."""
    return isinstance(value, types.ModuleType) and \
        value.__name__.split(".")[0] not in {"numpy", "s2sgrad", "scipy", "math", "builtins"}


def seen_names(function: types.FunctionType) -> Iterator[tuple]:
    """``(holder, name, value)`` for each name ``function`` reads and can see (holder_of), for
    each attribute it reads of a user module it sees (``data.scale``: the module's dict), and
    for each member of a user class it may read (class_members: lower/methods.py inlines them)."""
    names = live_names(function)
    read = names_read(function.__code__)
    for name in read:
        if name in names:
            yield holder_of(function, name), name, names[name]
    for module in {id(names[n]): names[n] for n in read if _user_module(names.get(n))}.values():
        scope = vars(module)
        for attr in read:
            if attr in scope:
                yield scope, attr, scope[attr]
    yield from class_members(function)


def user_class(value: Any) -> bool:
    """True for a class of the user's (not numpy's, scipy's, s2sgrad's or a builtin's)."""
    return isinstance(value, type) and \
        value.__module__.split(".")[0] not in {"numpy", "s2sgrad", "scipy", "math", "builtins"}


class Members:
    """The members of a class, or of the object a name holds (read again at each lookup), as the
    binding's check reads them: ``members[attr]`` is what ``obj.attr`` finds without running it
    (the object's own attribute, else the first class in its method resolution order holding
    ``attr``); KeyError where none does."""

    def __init__(self, source: Any) -> None:
        self.source = source  # a class, or (holder, name) where an object lives

    def __getitem__(self, attr: str) -> Any:
        if isinstance(self.source, type):
            cls, own = self.source, {}
        else:
            holder, name = self.source
            obj = holder.cell_contents if isinstance(holder, types.CellType) else holder[name]
            cls, own = type(obj), getattr(obj, "__dict__", {})
        if attr in own:
            return own[attr]
        for klass in cls.__mro__[:-1]:
            if attr in vars(klass):
                return vars(klass)[attr]
        raise KeyError(attr)


def member_code(member: Any) -> Any:
    """The function a class member runs when read (a method, a property's getter), else None."""
    if isinstance(member, property):
        member = member.fget
    return member if isinstance(member, types.FunctionType) else None


def class_members(function: types.FunctionType) -> Iterator[tuple]:
    """``(Members holder, attr, member)`` for each member of a class defined in ``function``'s
    module (lower/methods.py reads no other) that it may read by an attribute name it (or a member
    found so far) reads: the classes of the objects it reads by name, and the classes its module
    defines (those it builds, and those of its pytree arguments)."""
    names = live_names(function)
    own = function.__module__
    sources: dict = {}
    for name in names_read(function.__code__):
        value = names.get(name)
        if name in names and not user_class(value) and user_class(type(value)) and \
                type(value).__module__ == own and not callable(value):
            sources[(id(holder_of(function, name)), name)] = (holder_of(function, name), name)
    for value in function.__globals__.values():
        if user_class(value) and value.__module__ == own:
            sources.setdefault(id(value), value)
    for source in sources.values():
        members = Members(source)
        attrs = list(names_read(function.__code__))
        seen: set = set()
        while attrs:
            attr = attrs.pop(0)
            if attr in seen:
                continue
            seen.add(attr)
            try:
                member = members[attr]
            except (KeyError, ValueError):
                continue
            if isinstance(member, (types.FunctionType, property, staticmethod, classmethod)):
                yield members, attr, member
                code = member_code(member)
                if code is not None:
                    attrs.extend(names_read(code.__code__))


def reachable(fn: types.FunctionType) -> Iterator[tuple]:
    """``(function, the names it sees)`` for ``fn`` and every user function it can call by
    name (or as an attribute of a user module), transitively (each once, in a deterministic
    order)."""
    seen: set = set()
    todo = [fn]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current, live_names(current)
        for _, _, value in seen_names(current):
            callee = python_function(member_code(value) if isinstance(value, property) else value)
            if callee is not None and id(callee) not in seen:
                todo.append(callee)


def _describe(value: Any) -> str:
    """What of ``value`` the generated text can depend on: what a function or module is, the
    value of a literal, the type of anything else (arrays are read when the code runs)."""
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if isinstance(value, _LITERALS):
        return f"{type(value).__name__} {value!r}"
    python = python_function(value)
    if python is not None:
        code = python.__code__
        return f"function {python.__module__}.{python.__qualname__} {code.co_filename}:{code.co_firstlineno}"
    if callable(value):
        owner = getattr(value, "__module__", None) or type(value).__module__
        return f"callable {owner}.{getattr(value, '__qualname__', getattr(value, '__name__', '?'))}"
    return f"value of type {type(value).__module__}.{type(value).__qualname__}"


def fingerprint(fn: types.FunctionType) -> str:
    """The free names of ``fn`` and of the user functions it reaches, with what each is bound to,
    plus their parameter defaults: part of the cache key (``make(np.sin)`` and ``make(np.cos)``
    build the same inner ``def`` and must not share an entry)."""
    parts = []
    for function, names in reachable(_unwrap(fn)):
        code = function.__code__
        parts.append(f"{function.__qualname__}@{code.co_filename}:{code.co_firstlineno}")
        for name in names_read(code):
            if name in names:
                parts.append(f"  {name}: {_describe(names[name])}")
        for value in (function.__defaults__ or ()) + tuple((function.__kwdefaults__ or {}).values()):
            parts.append(f"  default: {_describe(value)}{_held_by(function, value)}")
    return "\n".join(parts)


def _held_by(function: types.FunctionType, value: Any) -> str:
    """For a default the generated text may spell by a name (not a literal): the globals of
    ``function`` holding that very object now (a name rebound since the def makes another key,
    and lower/resolve.default_of refuses the text that would read the new value)."""
    if isinstance(value, _LITERALS):
        return ""
    names = sorted(name for name, held in function.__globals__.items() if held is value)
    return f" (held by {', '.join(names)})" if names else " (held by no global)"


def holder_of(fn: types.FunctionType, name: str) -> Any:
    """Where ``fn`` reads ``name`` when it runs: its closure cell, else its globals dict."""
    if fn.__closure__ and name in fn.__code__.co_freevars:
        return fn.__closure__[fn.__code__.co_freevars.index(name)]
    return fn.__globals__


def binding_of(fn: Any) -> Any:
    """The binding of the generated module ``fn`` was loaded from, else None."""
    scope = getattr(fn, "__globals__", None) if isinstance(fn, types.FunctionType) else None
    return scope.get(BINDING_KEY) if scope is not None else None


def guard_of(value: Any) -> tuple:
    """What generated code may be specialized on in ``value``: ``("is", value)`` for what is
    read as code (a function, any callable, a module: its derivative or rule was written out),
    else ``("type", its type)`` (an array's methods are array methods; its contents, a number's
    value, are read when the code runs)."""
    if callable(value) or isinstance(value, (types.ModuleType, property, staticmethod, classmethod)):
        return "is", value
    return "type", type(value)


DEFAULTS = ("__defaults__", "__kwdefaults__")  # a function's fields holding its defaults


def specialized_on(fn: types.FunctionType) -> tuple:
    """``(guards, generated)``: for ``fn`` and each user function it reaches, each name it reads
    and can see (seen_names) as ``(holder, name, kind, expected)`` (guard_of), and its defaults
    (``(function, "__defaults__", "is", the tuple)``: the function is the holder); and the
    generated functions it reaches (their own bindings keep them current; they are not walked)."""
    guards: list = []
    generated: list = []
    seen: set = set()
    todo = [_unwrap(fn)]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        if binding_of(current) is not None:
            generated.append(current)
            continue
        for field in DEFAULTS:  # the generated text spells them (lower/resolve.default_of)
            guards.append((current, field, "is", getattr(current, field)))
        for holder, name, value in seen_names(current):
            guards.append((holder, name, *guard_of(value)))
            callee = python_function(member_code(value) if isinstance(value, property) else value)
            if callee is not None and id(callee) not in seen:
                todo.append(callee)
    return guards, generated


def resolve(fn: types.FunctionType, wanted: list) -> dict:
    """``name -> (value, holder)`` for ``wanted`` names: ``fn``'s own first, then those of the
    functions it reaches (a closure's callee reading its own closure); ``holder`` is the globals
    dict or closure cell the value is read from (holder_of)."""
    out: dict = {}
    owner: dict = {}
    for function, names in reachable(_unwrap(fn)):
        reads = set(names_read(function.__code__))
        for name in wanted:
            if name not in names:
                continue
            if name not in out:
                out[name], owner[name] = names[name], function
            elif name in reads and names[name] is not out[name] and \
                    name in names_read(owner[name].__code__):
                raise _two_meanings(name, owner[name], function)
    return {name: (value, holder_of(owner[name], name)) for name, value in out.items()}


def _two_meanings(name: str, first: types.FunctionType, second: types.FunctionType) -> TransformError:
    code = second.__code__
    lines = linecache.getlines(code.co_filename)
    quoted = lines[code.co_firstlineno - 1] if 0 < code.co_firstlineno <= len(lines) else ""
    return TransformError(
        f"`{name}` is one value in {first.__qualname__} and another in {second.__qualname__}, "
        "which it calls; the generated code of both lives in one module",
        Location(display_path(code.co_filename), code.co_firstlineno,
                 len(quoted) - len(quoted.lstrip()) + 1, quoted),
        f"rename `{name}` in one of them",
    )


def check_current(fn: types.FunctionType, lines: list, path: str) -> None:
    """Raise when the source lines s2sgrad read for ``fn`` are not what ``fn`` was compiled from
    (its file was edited after it was defined, and the module not reloaded)."""
    code = fn.__code__
    key = (code.co_filename, code.co_firstlineno, hash(tuple(lines)))
    if _CHECKED.get(id(code), (None, None))[1] == key:
        return
    block = _def_block(lines, code)
    compiled = _compile_block(block, code) if block is not None else None
    if compiled is None or _same_code(compiled, code):
        _CHECKED[id(code)] = (code, key)  # the code object is kept, so its id is not reused
        return
    raise TransformError(
        f"the file holding {fn.__qualname__} has changed since {fn.__name__} was defined: "
        "its source no longer matches the function that runs",
        Location(path, code.co_firstlineno, 1, lines[code.co_firstlineno - 1]),
        "reload the module (importlib.reload) or restart, so the running function is the one in the file",
    )


def _def_block(lines: list, code: types.CodeType) -> Any:
    """The decorators and def of ``code`` (from its first line to the last line its instructions
    name, and any closing lines after that), dedented; None when unclear."""
    first = code.co_firstlineno
    last = max((line for _, _, line in code.co_lines() if line), default=first)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            last = max([last] + [line for _, _, line in const.co_lines() if line])
    if not 0 < first <= last <= len(lines):
        return None
    indent = len(lines[first - 1]) - len(lines[first - 1].lstrip())
    while last < len(lines) and (not lines[last].strip() or
                                 len(lines[last]) - len(lines[last].lstrip()) > indent or
                                 lines[last].lstrip()[:1] in ")]}"):
        last += 1
    return textwrap.dedent("".join(lines[first - 1:last]))


def _compile_block(block: str, code: types.CodeType) -> Any:
    """``block`` compiled alone, or inside a def that binds ``code``'s free names (so they stay
    free)."""
    free = code.co_freevars
    if free:
        binds = f"    {' = '.join(free)} = None\n"
        block = f"def _s2sgrad_enclosing():\n{binds}{textwrap.indent(block, '    ')}\n"
    try:
        outer = compile(block, "<s2sgrad-check>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    if free:
        outer = next((c for c in outer.co_consts if isinstance(c, types.CodeType)), None)
    for inner in outer.co_consts if outer is not None else ():
        if isinstance(inner, types.CodeType) and inner.co_name == code.co_name:
            return inner
    return None


_IGNORED = frozenset({"CACHE", "EXTENDED_ARG", "NOP", "PRECALL", "PUSH_NULL", "RESUME"})
_SAME = {"LOAD_METHOD": "LOAD_ATTR"}  # a call on an imported module's attribute compiles either way


def _instructions(code: types.CodeType) -> list:
    """``code``'s instructions as (operation, value), without what depends on the surrounding
    module rather than on the function's text (a method-call form, jump offsets, padding)."""
    out = []
    for ins in dis.get_instructions(code):
        if ins.opname in _IGNORED:
            continue
        name = _SAME.get(ins.opname, ins.opname)
        if name == "STORE_NAME" and ins.argval == "__firstlineno__" and out:
            out[-1] = (out[-1][0], None)  # a class body's own line (3.13): where, not what
        if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs or isinstance(ins.argval, types.CodeType):
            out.append((name, None))
        elif name in ("LOAD_ATTR", "LOAD_GLOBAL"):
            out.append((name, ins.argval))
        elif isinstance(ins.argval, str) and "<locals>." in ins.argval:
            out.append((name, ins.argval.rsplit("<locals>.", 1)[1]))  # a nested def's qualname
        else:
            out.append((name, ins.argrepr))
    return out


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    if a.co_names != b.co_names or a.co_varnames != b.co_varnames or \
            _instructions(a) != _instructions(b):
        return False
    nested_a = [c for c in a.co_consts if isinstance(c, types.CodeType)]
    nested_b = [c for c in b.co_consts if isinstance(c, types.CodeType)]
    return len(nested_a) == len(nested_b) and all(map(_same_code, nested_a, nested_b))

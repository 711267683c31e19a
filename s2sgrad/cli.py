"""The command line: ``s2sgrad emit PATH... -o DIR [--check] [--diff] [--standalone]`` -> generated files, exit code.

For every Python file named (directories are searched recursively, in sorted order) that has
``@differentiable`` functions, writes ``DIR/<stem>_grad.py`` defining ``<f>_grad(<f's parameters>,
<f>_bar=1.0)`` (and the functions behind it) for each, and for ``@differentiable(order=2)`` also
``<f>_grad_jvp`` (forward mode over the gradient: Hessian-vector products). Files are read as
text, never run. ``--standalone`` copies the runtime helpers a file calls into it
(``write/standalone.py``), so it needs only numpy.

Exit codes:
  0  success (``--check``: every generated file is up to date)
  1  ``--check`` found a missing or stale generated file
  2  a file could not be transformed (located error printed), a path does not exist, two inputs
     map to the same output, an output file was not written by s2sgrad, or bad usage
  3  an internal error in s2sgrad (please report it)
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from dataclasses import dataclass
from typing import Optional, Sequence

from .version import __version__
from .errors import TransformError
from .read import project
from .read.capture import from_file, location_of
from .write.standalone import StandaloneError, standalone_text

EXIT_OK, EXIT_STALE, EXIT_ERROR, EXIT_INTERNAL = 0, 1, 2, 3


@dataclass(frozen=True)
class Job:
    """One input file with differentiable functions, and where its generated file goes."""

    path: str  # the input file
    source: str  # its display path (relative to the working directory)
    out_path: str  # the generated file
    output: str  # its display path
    command: str  # the command that regenerates ``output``
    text: str
    marked: tuple  # project.Marked


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="s2sgrad", description="Source-to-source reverse-mode AD for Python and NumPy.",
        epilog="exit codes: 0 ok, 1 --check found stale or missing files, 2 transform or usage "
               "error, 3 internal error")
    parser.add_argument("--version", action="version", version=f"s2sgrad {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    emit = commands.add_parser(
        "emit", help="write <stem>_grad.py for files with @differentiable functions",
        description="Write DIR/<stem>_grad.py for each file with @differentiable functions, "
                    "without importing or running it. Run from the project root: paths in the "
                    "generated headers are relative to the working directory.",
        epilog="exit codes: 0 ok, 1 --check found stale or missing files, 2 transform or usage "
               "error, 3 internal error")
    emit.add_argument("paths", nargs="+", metavar="PATH", help="Python files or directories")
    emit.add_argument("-o", "--output", required=True, metavar="DIR",
                      help="directory for the generated files")
    emit.add_argument("--check", action="store_true",
                      help="write nothing; exit 1 listing every stale or missing generated file")
    emit.add_argument("--diff", action="store_true",
                      help="write nothing; print unified diffs of what would change")
    emit.add_argument("--standalone", action="store_true",
                      help="copy the runtime helpers into each file: it needs only numpy, not s2sgrad")
    return parser


def _relative(path: str) -> str:
    """``path`` relative to the working directory (``..`` allowed, never absolute when avoidable)."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive on Windows
        rel = path
    return rel.replace(os.sep, "/")


def _error(message: str) -> None:
    print(message, file=sys.stderr)


def _collect(paths: Sequence[str], out_dir: str) -> tuple:
    """The jobs for ``paths`` and the errors met on the way (strings, already rendered)."""
    jobs, errors, claimed = [], [], {}
    out_display = _relative(out_dir)
    for path in project.python_files(paths):
        source = _relative(path)
        try:
            text = project.read_text(path)
            marked = project.marked_functions(text, source)
        except TransformError as exc:
            errors.append(str(exc))
            continue
        except (OSError, UnicodeDecodeError) as exc:
            errors.append(f"{source}: cannot read: {exc}")
            continue
        if not marked:
            continue
        stem = os.path.splitext(os.path.basename(path))[0]
        out_path = os.path.join(out_dir, f"{stem}_grad.py")
        output = _relative(out_path)
        if output in claimed:
            errors.append(f"{source}: its generated file {output} would also be written for "
                          f"{claimed[output]}; rename one of the two files")
            continue
        claimed[output] = source
        command = f"s2sgrad emit {source} -o {out_display}"
        jobs.append(Job(path, source, out_path, output, command, text, marked))
    return tuple(jobs), tuple(errors)


def _targets(job: Job, path_on_disk: str) -> tuple:
    from .pipeline import Options, keyed_trees

    module = project.module_name(path_on_disk)
    targets = []
    for m in job.marked:
        unit = from_file(path_on_disk, m.name, m.def_line, module, job.text)
        if m.wrt is None and not m.params:
            raise TransformError(f"{m.name} has no parameter to differentiate with respect to",
                                 location_of(unit, m.def_line, 1), "give it a parameter")
        wrt = m.wrt if m.wrt is not None else m.params[:1]
        trees = keyed_trees(unit, wrt)  # dicts read by their keys: the sweeps take their leaves
        if trees and m.order == 2:
            raise TransformError(
                f"{m.name} takes a dict (`{trees[0][0]}`) and asks for order=2: the generated "
                "file has second derivatives for arrays only", location_of(unit, m.def_line, 1),
                "use s2sgrad.hessian or s2sgrad.hvp at run time, or pass the arrays separately")
        targets.append((unit, Options(wrt=wrt, trees=trees)))
    return tuple(targets)


def _generate(job: Job) -> str:
    """The generated file's text: the gradients, then (for ``order=2``) their forward mode."""
    from .pipeline import generate_module

    targets = _targets(job, job.path)
    module = generate_module(targets, command=job.command, source=job.source)
    second = tuple((names.grad, options.wrt) for m, (_, options), names
                   in zip(job.marked, targets, module.names) if m.order == 2)
    if not second:
        return module.text
    from .compose import second_order_text

    stem = os.path.splitext(os.path.basename(job.out_path))[0]
    return second_order_text(module.text, job.output, stem, second)[0]


def emit(paths: Sequence[str], out_dir: str, *, check: bool = False, diff: bool = False,
         standalone: bool = False) -> int:
    """Run ``s2sgrad emit``; returns the exit code."""
    try:
        jobs, errors = _collect(paths, out_dir)
    except FileNotFoundError as exc:
        _error(f"s2sgrad: error: no such file or directory: {exc.args[0]}")
        return EXIT_ERROR
    errors = list(errors)
    stale: list = []
    counts = {"written": 0, "unchanged": 0}
    for job in jobs:
        if standalone:
            job = dataclasses.replace(job, command=f"{job.command} --standalone")
        _emit_one(job, errors, stale, counts, check=check, diff=diff, standalone=standalone)
    for message in errors + stale:
        _error(message)
    if not (check or diff or errors):
        print(f"{counts['written']} written, {counts['unchanged']} unchanged", file=sys.stderr)
    if errors:
        return EXIT_ERROR
    return EXIT_STALE if stale else EXIT_OK


def _emit_one(job, errors: list, stale: list, counts: dict, *, check: bool, diff: bool,
              standalone: bool = False) -> None:
    """Generate one file and write it, or show or report how it differs from the one on disk."""
    from .write import emit as emitter

    try:
        text = _generate(job)
        text = standalone_text(text) if standalone else text
    except StandaloneError as exc:
        errors.append(f"{job.source}: --standalone: {exc}")
        return
    except TransformError as exc:
        errors.append(str(exc))
        return
    change = emitter.plan(job.out_path, text)
    if change.status == "foreign":
        errors.append(f"{job.output}: refusing to overwrite a file s2sgrad did not generate "
                      f"(its first line is not the s2sgrad header); move it away or pick "
                      f"another -o directory")
        return
    if change.status == "unchanged":
        counts["unchanged"] += 1
        return
    if diff:
        sys.stdout.write(emitter.unified_diff(change, job.output))
    if check:
        stale.append(f"{job.output}: {change.status} (regenerate with `{job.command}`)")
    elif not diff:
        emitter.write_atomic(job.out_path, text)
        counts["written"] += 1
        print(f"wrote {job.output}")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``s2sgrad`` console script and ``python -m s2sgrad``."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "emit":
            return emit(args.paths, args.output, check=args.check, diff=args.diff,
                        standalone=args.standalone)
    except KeyboardInterrupt:
        _error("s2sgrad: interrupted")
        return EXIT_ERROR
    except Exception as exc:  # noqa: BLE001 - a bug in s2sgrad: say so in one line, no traceback
        if os.environ.get("S2SGRAD_TRACEBACK"):
            raise
        _error(f"s2sgrad: internal error: {type(exc).__name__}: {exc} (please report it; set "
               f"S2SGRAD_TRACEBACK=full to see the traceback)")
        return EXIT_INTERNAL
    return EXIT_ERROR

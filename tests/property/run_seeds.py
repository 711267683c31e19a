"""Replay generator seeds lo..hi outside the suite, as test_property.py's failure replay does.

usage: python tests/property/run_seeds.py LO HI [--refuse | --third] [--avoid zip,tuple_param] [--out DIR]
Each seed: generate(Chooser(seed=N)), then test_property.check_modes (reverse mode vs finite
differences and autograd, one argnum vs the tuple, jvp vs <grad, direction>, hvp vs differences of
gradients; TransformError refusals of jvp/hvp allowed). --refuse: generate(..., refuse=True) and
check_refused. --third: third_order_check.check_third (grad of grad of grad against
differences). One JSON line per seed in OUT/results-LO-HI.jsonl; each failure's full report
(program, inputs, error) in OUT/fail/<seed>.txt.
"""
import json
import os
import pathlib
import sys
import tempfile
import time
import traceback
import warnings

os.environ["S2SGRAD_CACHE_DIR"] = ""
ROOT = pathlib.Path(os.environ.get("PROP_TREE", pathlib.Path(__file__).resolve().parents[2]))
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "inputs"), str(ROOT / "tests" / "property")]
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402
from program_gen import Chooser, generate  # noqa: E402
import test_property as tp  # noqa: E402


def main():
    lo, hi = int(sys.argv[1]), int(sys.argv[2])
    refuse = "--refuse" in sys.argv
    third = "--third" in sys.argv
    avoid = sys.argv[sys.argv.index("--avoid") + 1].split(",") if "--avoid" in sys.argv else ()
    tagname = ("-refuse" if refuse else "-third" if third else "") + ("-avoid_" + "_".join(avoid) if avoid else "")
    out = pathlib.Path(sys.argv[sys.argv.index("--out") + 1]) if "--out" in sys.argv else pathlib.Path("propseeds")
    (out / "fail").mkdir(parents=True, exist_ok=True)
    results = open(out / f"results-{lo}-{hi}{tagname}.jsonl", "a")
    for seed in range(lo, hi):
        t0, c0 = time.time(), time.process_time()
        prog = generate(Chooser(seed=seed), refuse=refuse, avoid=avoid)
        rec = {"seed": seed, "tags": sorted(prog.tags), "refuse": refuse, "avoid": list(avoid)}
        with tempfile.TemporaryDirectory() as d:
            try:
                if refuse:
                    tp.check_refused(prog, pathlib.Path(d))
                    rec["status"] = "ok"
                elif third:
                    from third_order_check import check_third

                    rec["refused"] = check_third(prog, pathlib.Path(d), seed)
                    rec["status"] = "ok"
                else:
                    rng = np.random.default_rng(seed)
                    refused = tp.check_modes(prog, pathlib.Path(d), int(rng.integers(3)), int(rng.integers(2**16)),
                                             every_way=True)
                    rec["status"] = "ok"
                    rec["refused"] = refused
            except BaseException as exc:  # noqa: BLE001
                if isinstance(exc, KeyboardInterrupt):
                    raise
                rec["status"] = "fail"
                msg = str(exc)
                rec["what"] = msg.split("\n--- program")[0][-600:] if "--- program" in msg else f"{type(exc).__name__}: {msg[:600]}"
                rec["cause"] = repr(exc.__cause__)[:600] if exc.__cause__ else None
                tb = traceback.format_exception(exc.__cause__) if exc.__cause__ else traceback.format_exception(exc)
                (out / "fail" / f"{seed}{tagname}.txt").write_text(
                    f"{msg}\n\n--- traceback ---\n{''.join(tb)[-6000:]}\n\n--- as generated ---\n{tp._report(prog, '')}")
        rec["secs"] = round(time.time() - t0, 2)
        rec["cpu"] = round(time.process_time() - c0, 2)
        results.write(json.dumps(rec) + "\n")
        results.flush()
        for name in [m for m in sys.modules if m.startswith("s2sgrad_prop_")]:
            del sys.modules[name]


if __name__ == "__main__":
    main()

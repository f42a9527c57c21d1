"""Write the ``spread`` / ``fragmentation`` stage models of an overload instance; probe one.

The overload benchmark's unproven instances end with a stage whose bound stays 1-3 units below
its value. ``dump`` solves one instance as ``bench_overload.py`` does and writes the model each
minimisation stage searches (objective set, the stage's warm start as hint, earlier stages
frozen) as CP-SAT text protos; ``probe`` solves such a file again with the engine's parameters,
CP-SAT overrides and, optionally, variables fixed to their hinted values — to ask what closes
the bound without re-running the whole solve (docs/cpsat-formulation.md, section 8).

    PYTHONPATH=src .venv/bin/python benchmarks/overload_stage_models.py dump 1.2 4 [--dir D]
        [--wall-cap 900]
    PYTHONPATH=src .venv/bin/python benchmarks/overload_stage_models.py probe D/1.2-4-spread.txt
        [--dtime 15] [--param 'optimize_with_core: true'] [--fix-hinted 'y_\\d+$']
        [--order subjobs|leaves|both] [--multiset] [--patterns leaf|domain] [--min-size 4]
        [--at-most 59] [--output probes.jsonl]

``--order`` / ``--multiset`` add the symmetry rows of ``overload_symmetry.py``, ``--patterns``
the packing patterns of ``overload_patterns.py`` (the instance is rebuilt from the file name,
``LOAD-SEED-STAGE.txt``).
"""

from __future__ import annotations

import argparse
import json
import re
from contextlib import contextmanager
from pathlib import Path

from bench_overload import NODES, OCCUPANCY
from ortools.sat.python import cp_model
from overload_patterns import add_pattern_rows
from overload_symmetry import add_order_rows

import toposolve
from toposolve.core.deadline import Deadline
from toposolve.core.problem import compile_problem
from toposolve.engines.cpsat.model.candidates import build_candidates
from toposolve.engines.cpsat.model.classes import Scope
from toposolve.engines.cpsat.solve import runner
from toposolve.engines.cpsat.solve.parameters import Settings
from toposolve.generate import generate

STAGES = ("spread", "fragmentation")


@contextmanager
def writing_stage_models(prefix: Path):
    """While active, every search of a stage in :data:`STAGES` first writes its model."""
    search = runner.Run.search

    def dumping(run, pm, stage, share, target):
        if stage.label in STAGES:
            model = pm.model.clone()
            model.clear_objective()
            (model.maximize if stage.maximise else model.minimize)(stage.expr)
            model.export_to_file(f"{prefix}-{stage.label}.txt")
        return search(run, pm, stage, share, target)

    runner.Run.search = dumping
    try:
        yield
    finally:
        runner.Run.search = search


def overload_problem(load: float, seed: int):
    """The benchmark's instance, compiled."""
    return compile_problem(generate("superpod", nodes=NODES, load=load, seed=seed,
                                    occupancy=OCCUPANCY))


def dump(load: float, seed: int, time_limit: float, out: Path,
         wall_cap: float | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    problem = overload_problem(load, seed)
    with writing_stage_models(out / f"{load}-{seed}"):
        # as bench_overload.py: a wall cap leaves the deterministic budget to decide
        deadline = None if wall_cap is None else Deadline(time_limit, deterministic=True,
                                                           wall_cap=wall_cap)
        plan = toposolve.solve_problem(problem, "cpsat", options=toposolve.SolveOptions(
            time_limit=time_limit, deadline=deadline))
    for s in plan.stats.get("stages", []):
        print(s["stage"], s["status"], "bound", s["bound"], "gap", s["gap"],
              "dtime", s["deterministic_time"])
    print("wrote", *sorted(out.glob(f"{load}-{seed}-*.txt")))


def probe(path: Path, dtime: float, param: str, fix_hinted: str | None, order: str | None = None,
          multiset: bool = False, output: Path | None = None, at_most: int | None = None,
          patterns: str | None = None, min_size: int = 1) -> None:
    model = cp_model.CpModel()
    model.proto.parse_text_format(path.read_text())
    if at_most is not None:  # the proof as a pure feasibility question: objective ≤ at_most?
        objective = model.proto.objective
        expr = sum(c * model.get_int_var_from_proto_index(v)
                   for v, c in zip(objective.vars, objective.coeffs, strict=True))
        model.clear_objective()
        model.add(expr <= at_most)
    rows, pattern_rows = 0, None
    if order or multiset or patterns:
        load, seed, _stage = path.stem.split("-")
        problem = overload_problem(float(load), int(seed))
        cands = build_candidates(problem, Scope())
        rows = add_order_rows(model, problem, cands, subjobs=order in ("subjobs", "both"),
                              leaves=order in ("leaves", "both"), multiset=multiset)
        if patterns:
            pattern_rows = add_pattern_rows(model, problem, cands, per=patterns,
                                              min_size=min_size)
    fixed = 0
    if fix_hinted:
        hint = dict(zip(model.proto.solution_hint.vars, model.proto.solution_hint.values,
                        strict=True))
        for i, var in enumerate(model.proto.variables):
            if i in hint and re.match(fix_hinted, var.name):
                model.add(model.get_int_var_from_proto_index(i) == hint[i])
                fixed += 1
    solver = cp_model.CpSolver()
    settings = Settings(time_limit=dtime, workers=1, seed=0, deterministic=True, log=False)
    solver.parameters.merge_text_format(str(settings.parameters(dtime)))
    if param:
        solver.parameters.merge_text_format(param)
    status = solver.solve(model)
    record = {"model": path.name, "param": param, "fixed": fixed, "order": order, "rows": rows,
              "multiset": multiset, "patterns": patterns, "min_size": min_size,
              "pattern_rows": pattern_rows, "at_most": at_most, "dtime_limit": dtime,
              "status": solver.status_name(status),
              "value": solver.objective_value, "bound": solver.best_objective_bound,
              "dtime": round(solver.deterministic_time, 3), "wall_s": round(solver.wall_time, 1),
              "cpu_s": round(solver.user_time, 1)}
    print(" ".join(f"{k} {v}" for k, v in record.items()))
    if output is not None:  # one JSON record per line: several probes may append at once
        with output.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("load", type=float)
    d.add_argument("seed", type=int)
    d.add_argument("--time-limit", type=float, default=30.0)
    d.add_argument("--dir", default="overload-models")
    d.add_argument("--wall-cap", type=float, default=None,
                   help="wall seconds; the deterministic budget decides (loaded machines)")
    p = sub.add_parser("probe")
    p.add_argument("model")
    p.add_argument("--dtime", type=float, default=15.0)
    p.add_argument("--param", default="", help="SatParameters text, e.g. 'symmetry_level: 2'")
    p.add_argument("--fix-hinted", default=None, help="regex of variable names to fix")
    p.add_argument("--order", choices=("subjobs", "leaves", "both"), default=None,
                   help="symmetry rows among identical SubJobs of a job / identical leaves")
    p.add_argument("--multiset", action="store_true",
                   help="branch first on how many SubJobs of each family each leaf holds")
    p.add_argument("--patterns", choices=("leaf", "domain"), default=None,
                   help="one-hot packing patterns per whole-node leaf or level-1 domain")
    p.add_argument("--min-size", type=int, default=1,
                   help="patterns count units of at least this many pods")
    p.add_argument("--output", default=None, help="append the result to this JSON-lines file")
    p.add_argument("--at-most", type=int, default=None,
                   help="drop the objective; ask whether it can be at most this (minimisation)")
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.load, args.seed, args.time_limit, Path(args.dir), args.wall_cap)
    else:
        probe(Path(args.model), args.dtime, args.param, args.fix_hinted, args.order,
              args.multiset, Path(args.output) if args.output else None, args.at_most,
              args.patterns, args.min_size)


if __name__ == "__main__":
    main()

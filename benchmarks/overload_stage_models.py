"""Write the ``spread`` / ``fragmentation`` stage models of an overload instance; probe one.

The overload benchmark's unproven instances end with a stage whose bound stays 1-3 units below
its value. ``dump`` solves one instance as ``bench_overload.py`` does and writes the model each
minimisation stage searches (objective set, the stage's warm start as hint, earlier stages
frozen) as CP-SAT text protos; ``probe`` solves such a file again with the engine's parameters,
CP-SAT overrides and, optionally, variables fixed to their hinted values — to ask what closes
the bound without re-running the whole solve (docs/cpsat-formulation.md, section 8).

    PYTHONPATH=src .venv/bin/python benchmarks/overload_stage_models.py dump 1.2 4 [--dir D]
    PYTHONPATH=src .venv/bin/python benchmarks/overload_stage_models.py probe D/1.2-4-spread.txt
        [--dtime 15] [--param 'optimize_with_core: true'] [--fix-hinted 'y_\\d+$']
"""

from __future__ import annotations

import argparse
import re
from contextlib import contextmanager
from pathlib import Path

from bench_overload import NODES, OCCUPANCY
from ortools.sat.python import cp_model

import toposolve
from toposolve.core.problem import compile_problem
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


def dump(load: float, seed: int, time_limit: float, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    instance = generate("superpod", nodes=NODES, load=load, seed=seed, occupancy=OCCUPANCY)
    problem = compile_problem(instance)
    with writing_stage_models(out / f"{load}-{seed}"):
        plan = toposolve.solve_problem(problem, "cpsat",
                                       options=toposolve.SolveOptions(time_limit=time_limit))
    for s in plan.stats.get("stages", []):
        print(s["stage"], s["status"], "bound", s["bound"], "gap", s["gap"],
              "dtime", s["deterministic_time"])
    print("wrote", *sorted(out.glob(f"{load}-{seed}-*.txt")))


def probe(path: Path, dtime: float, param: str, fix_hinted: str | None) -> None:
    model = cp_model.CpModel()
    model.proto.parse_text_format(path.read_text())
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
    print(f"{path.name} [{param}] fixed {fixed}: {solver.status_name(status)} value "
          f"{solver.objective_value:g} bound {solver.best_objective_bound:g} dtime "
          f"{solver.deterministic_time:.2f} wall {solver.wall_time:.1f}s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("load", type=float)
    d.add_argument("seed", type=int)
    d.add_argument("--time-limit", type=float, default=30.0)
    d.add_argument("--dir", default="overload-models")
    p = sub.add_parser("probe")
    p.add_argument("model")
    p.add_argument("--dtime", type=float, default=15.0)
    p.add_argument("--param", default="", help="SatParameters text, e.g. 'symmetry_level: 2'")
    p.add_argument("--fix-hinted", default=None, help="regex of variable names to fix")
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.load, args.seed, args.time_limit, Path(args.dir))
    else:
        probe(Path(args.model), args.dtime, args.param, args.fix_hinted)


if __name__ == "__main__":
    main()

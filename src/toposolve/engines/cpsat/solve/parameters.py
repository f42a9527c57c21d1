"""Run settings of the CP-SAT engine and raw ``SatParameters`` overrides.

Rules and rationale: ``docs/cpsat-formulation.md``, section
``toposolve.engines.cpsat.solve.parameters``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from google.protobuf.descriptor import FieldDescriptor
from ortools.sat import sat_parameters_pb2

from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_WORKERS, count_problem
from toposolve.engines.contract import SolveOptions
from toposolve.policy.profiles import Profile

SatParameters = sat_parameters_pb2.SatParameters
# deterministic mode with at most this many workers runs one sequential search instead of the
# interleaved portfolio: on the overload benchmark the portfolio spent ~10× the deterministic
# time to prove the same `placed` optimum (docs/cpsat-formulation.md)
SEQUENTIAL_UP_TO = 2
PORTFOLIO_BATCH = 16
"""Tasks per batch of the deterministic portfolio, fixed so that no thread count changes it."""


def pin_portfolio(p: SatParameters) -> None:
    """Make the interleaved portfolio the same whatever ``p.num_workers`` (its thread count).

    Every default through which OR-Tools 9.15 lets ``num_workers`` shape the interleaved search
    is set to a constant (``docs/cpsat-formulation.md``, section 3a): the batch size (default
    3 × workers), the violation local searches (one per 3 threads left), ``lns_lb_relax`` (from
    16 workers), variable shaving (from 20), shared-tree workers (from 26) and the
    first-solution subsolvers (one per thread beyond the full ones; the warm start is the
    first solution anyway).

    Parameters
    ----------
    p
        The solve's parameters, changed in place; ``p.num_workers`` (the threads) must be at
        least 2: on one thread CP-SAT shares no clauses and synchronises at once, another search.
    """
    p.interleave_search = True
    p.interleave_batch_size = PORTFOLIO_BATCH
    p.num_violation_ls = 0
    p.use_lb_relax_lns = False
    p.variables_shaving_level = 0
    p.shared_tree_num_workers = 0
    p.ignore_subsolvers.extend(["fj*", "fs*"])


@dataclass
class Settings:
    time_limit: float
    workers: int
    seed: int
    deterministic: bool
    log: bool
    overrides: SatParameters = field(default_factory=SatParameters)

    def parameters(self, budget: float, *, workers: int | None = None,
                   wall_cap: float | None = None) -> SatParameters:
        """Parameters of one solve with ``budget`` seconds (deterministic units in that mode;
        ``wall_cap`` then caps its wall-clock seconds, see :mod:`.budget`)."""
        p = SatParameters()
        p.num_workers = workers or self.workers
        p.random_seed = self.seed
        p.fix_variables_to_their_hinted_value = False
        # every solve is warm-started; presolve's symmetry fixing would cut the hint off
        p.symmetry_level = 0
        # the full linear relaxation (cuts on every constraint, incl. the gang knapsacks): with the
        # default level the sequential search left 4 of 30 overloaded superpods unproven after 27 s;
        # with 2 each was proven in < 2 s (docs/cpsat-formulation.md)
        p.linearization_level = 2
        p.log_search_progress = self.log
        p.log_to_stdout = False
        # Ctrl-C belongs to the host: CP-SAT's own handler would swallow it and finish the plan
        p.catch_sigint_signal = False
        budget = max(budget, 0.01)
        if self.deterministic:
            if p.num_workers <= SEQUENTIAL_UP_TO:
                p.num_workers = 1  # one sequential search: deterministic by construction
            else:
                pin_portfolio(p)  # the same plan on any number of threads
            p.max_deterministic_time = budget
            p.max_time_in_seconds = wall_cap if wall_cap is not None else 10 * self.time_limit + 60
        else:
            p.max_time_in_seconds = budget
        p.MergeFrom(self.overrides)
        return p

    def configure(self, solver, budget: float, *, workers: int | None = None,
                  wall_cap: float | None = None) -> None:
        """Give ``solver`` the parameters of one solve (OR-Tools' own proto takes text format)."""
        solver.parameters.merge_text_format(str(self.parameters(budget, workers=workers,
                                                                wall_cap=wall_cap)))
        if self.log:
            solver.log_callback = self.log_callback

    def log_callback(self, line: str) -> None:
        print(line, file=sys.stderr)


_WORKER_PARAMETERS = ("num_workers", "num_search_workers")  # 0 = CP-SAT picks


def _set(params: SatParameters, name: str, value: Any) -> None:
    fd = params.DESCRIPTOR.fields_by_name.get(name)
    where = f"solver.parameters.{name}"
    if fd is None:
        raise InputError(f"unknown CP-SAT parameter {name!r}", obj="Profile", field=where)
    if fd.message_type is not None:
        raise InputError("message-valued CP-SAT parameters are not supported", obj="Profile",
                         field=where)
    repeated = fd.is_repeated if hasattr(fd,
            "is_repeated") else fd.label == FieldDescriptor.LABEL_REPEATED
    values = value if repeated and isinstance(value, list) else [value]
    converted = []
    for item in values:
        if fd.enum_type is not None and isinstance(item, str):
            enum_value = fd.enum_type.values_by_name.get(item)
            if enum_value is None:
                known = ", ".join(fd.enum_type.values_by_name)
                raise InputError(f"invalid value {item!r} (one of: {known})", obj="Profile",
                                 field=where)
            item = enum_value.number
        elif fd.type == FieldDescriptor.TYPE_BOOL and not isinstance(item, bool):
            raise InputError(f"invalid value {item!r}: expected true or false", obj="Profile",
                             field=where)
        elif isinstance(item, float) and item != item:
            raise InputError("invalid value nan", obj="Profile", field=where)
        elif name in _WORKER_PARAMETERS and (why := count_problem(item, 0, MAX_WORKERS)):
            raise InputError(why, obj="Profile", field=where)
        converted.append(item)
    try:
        if repeated:
            getattr(params, name).extend(converted)
        else:
            setattr(params, name, converted[0])
    except (TypeError, ValueError) as exc:
        raise InputError(f"invalid value {value!r}: {exc}", obj="Profile", field=where) from None


def sat_overrides(raw: dict[str, Any]) -> SatParameters:
    """Validated ``SatParameters`` from a name → value map (InputError on unknown/invalid)."""
    params = SatParameters()
    for name, value in raw.items():
        _set(params, str(name), value)
    return params


def resolve_settings(profile: Profile, options: SolveOptions) -> Settings:
    """The run's options win over the profile's ``solver`` section."""
    sp = profile.solver
    time_limit, workers = options.time_limit, options.workers
    if time_limit is not None and time_limit <= 0:
        raise InputError("must be positive", field="time_limit")
    if workers is not None and workers < 1:
        raise InputError("must be at least 1", field="workers")
    return Settings(
        time_limit=float(time_limit if time_limit is not None else sp.time_limit),
        workers=int(workers if workers is not None else sp.workers),
        seed=int(options.seed if options.seed is not None else sp.seed),
        deterministic=bool(options.deterministic if options.deterministic is not None
                           else sp.deterministic),
        log=bool(options.log or sp.log),
        overrides=sat_overrides({**sp.parameters, **(options.parameters or {})}),
    )

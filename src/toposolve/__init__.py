"""toposolve: network-topology-aware gang placement, Volcano's greedy way and CP-SAT's optimal way.

Typical use::

    import toposolve
    instance = toposolve.load_instance("instances/default.yaml")
    plan = toposolve.solve(instance, engine="cpsat", time_limit=30)
    assert toposolve.check_plan(instance, plan) == []
"""

from .checker import Violation, check_plan
from .compare import Comparison, compare, format_comparison
from .engines.assignment import Assignment, from_plan, to_plan
from .engines.contract import EngineResult, ProgressEvent
from .engines.heuristic import HeuristicEngine, run_heuristic
from .errors import InputError
from .io.load import load_instance
from .metrics import PlanMetrics, plan_metrics
from .model.instance import Instance
from .objective import ObjectiveValue, evaluate
from .plan import Binding, JobPlacement, Plan, SubJobPlacement
from .plandiff import PlanDiff, diff
from .problem import Problem, compile_problem
from .profiles import Profile, load_profile
from .solve import EngineBug, SolveOptions, solve, solve_problem
from .topology import Topology, build_topology

__version__ = "0.1.0"

__all__ = [
    "Assignment",
    "Binding",
    "Comparison",
    "EngineBug",
    "EngineResult",
    "HeuristicEngine",
    "InputError",
    "Instance",
    "JobPlacement",
    "ObjectiveValue",
    "Plan",
    "PlanDiff",
    "PlanMetrics",
    "ProgressEvent",
    "Problem",
    "Profile",
    "SolveOptions",
    "SubJobPlacement",
    "Topology",
    "Violation",
    "build_topology",
    "check_plan",
    "compare",
    "compile_problem",
    "diff",
    "evaluate",
    "format_comparison",
    "from_plan",
    "load_instance",
    "load_profile",
    "plan_metrics",
    "run_heuristic",
    "solve",
    "solve_problem",
    "to_plan",
]

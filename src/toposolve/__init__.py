"""toposolve: network-topology-aware gang placement, Volcano's greedy way and CP-SAT's optimal way.

Typical use::

    import toposolve
    instance = toposolve.load_instance("instances/default.yaml")
    plan = toposolve.solve(instance, engine="cpsat", time_limit=30)
    assert toposolve.check_plan(instance, plan) == []
"""

from toposolve.analysis.compare import Comparison, compare
from toposolve.analysis.plandiff import PlanDiff, diff
from toposolve.check.checker import Violation, check_plan
from toposolve.core.assignment import Assignment, from_plan, to_plan
from toposolve.core.errors import InputError
from toposolve.core.instance import Instance
from toposolve.core.plan import Binding, JobPlacement, Move, Plan, SubJobPlacement
from toposolve.core.problem import Problem, compile_problem
from toposolve.core.topology import Topology, build_topology
from toposolve.defrag import DefragBug, defrag
from toposolve.engines.contract import EngineResult, ProgressEvent
from toposolve.engines.volcano import HeuristicEngine, run_heuristic
from toposolve.formats.load import load_instance
from toposolve.policy.metrics import PlanMetrics, plan_metrics
from toposolve.policy.objective import ObjectiveValue, evaluate
from toposolve.policy.profiles import Profile, load_profile
from toposolve.policy.ranks import assign_ranks
from toposolve.report.comparison import format_comparison
from toposolve.solve import EngineBug, SolveOptions, solve, solve_problem

__version__ = "0.1.0"

__all__ = [
    "Assignment",
    "Binding",
    "Comparison",
    "DefragBug",
    "EngineBug",
    "EngineResult",
    "HeuristicEngine",
    "InputError",
    "Instance",
    "JobPlacement",
    "Move",
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
    "assign_ranks",
    "build_topology",
    "check_plan",
    "compare",
    "compile_problem",
    "defrag",
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

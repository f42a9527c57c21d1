"""FGD's openb experiment (Weng et al., ATC '23) reproduced per GPU device (docs/fgd.md)."""

from toposolve.policy.fgd_measure import TargetWorkload
from toposolve.sim.fgd.experiment import Run, run_experiment, simulate
from toposolve.sim.fgd.frag import node_frag, typical_pods
from toposolve.sim.fgd.registry import POLICIES, make_policy
from toposolve.sim.fgd.state import MILLI, Nodes, Pods, State, feasible, place
from toposolve.sim.fgd.workload import Experiment, experiment, load_nodes, load_pods, tune

__all__ = ["MILLI", "POLICIES", "Experiment", "Nodes", "Pods", "Run", "State", "TargetWorkload",
           "experiment", "feasible", "load_nodes", "load_pods", "make_policy", "node_frag",
           "place", "run_experiment", "simulate", "tune", "typical_pods"]

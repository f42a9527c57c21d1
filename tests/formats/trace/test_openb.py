"""The openb trace reader: every pod, sharing modes, gangs, FGD's tuning, timing and order."""

from __future__ import annotations

import pytest

from toposolve.core.errors import InputError
from toposolve.formats.trace.openb import openb_trace

GPU = "nvidia.com/gpu"
CAPACITY = 6212  # GPUs of the 1,213 openb GPU nodes


def gpu_milli(trace):
    return [tj.job.tasks[0].replicas * tj.job.tasks[0].requests.get(GPU, 0) for tj in trace.jobs]


@pytest.fixture(scope="module")
def whole():
    return openb_trace()


def test_every_pod_once_in_trace_order(whole):
    assert len(whole) == 8152
    assert [tj.arrival for tj in whole.jobs] == sorted(tj.arrival for tj in whole.jobs)
    assert whole.jobs[0].key == "default/openb-pod-0000" and whole.jobs[0].duration == 12537496
    assert all(tj.job.tasks[0].replicas == 1 for tj in whole.jobs)


def test_shared_gpus_round_up_or_pool(whole):
    milli = openb_trace(gpu_sharing="milli")
    assert sorted({m % 1000 for m in gpu_milli(whole)}) == [0]
    assert sum(gpu_milli(whole)) == 7433 * 1000  # each pod's num_gpu, shares as whole GPUs
    assert sum(gpu_milli(milli)) == 6086800  # FGD's count: num_gpu × gpu_milli
    assert any(0 < m < 1000 for m in gpu_milli(milli))


def test_fgd_tuning_reaches_the_target_without_overshooting():
    trace = openb_trace(
        gpu_sharing="milli", timing="sequence", inflate=1.3, capacity=CAPACITY, seed=42
    )
    total = sum(gpu_milli(trace))
    assert 1.3 * CAPACITY * 1000 - 8000 < total <= 1.3 * CAPACITY * 1000
    assert [tj.arrival for tj in trace.jobs] == list(range(len(trace)))
    assert all(tj.duration is None for tj in trace.jobs)
    assert sum("-tuned-" in tj.key for tj in trace.jobs) == len(trace) - 8152


def test_tuning_down_and_shuffling():
    trace = openb_trace(
        gpu_sharing="milli",
        timing="sequence",
        inflate=0.5,
        capacity=CAPACITY,
        order="shuffle",
        seed=1,
    )
    assert sum(gpu_milli(trace)) <= 0.5 * CAPACITY * 1000
    names = [tj.key for tj in trace.jobs]
    assert names != sorted(names) and len(set(names)) == len(names)
    again = openb_trace(
        gpu_sharing="milli",
        timing="sequence",
        inflate=0.5,
        capacity=CAPACITY,
        order="shuffle",
        seed=1,
    )
    assert [tj.key for tj in again.jobs] == names
    other = openb_trace(
        gpu_sharing="milli",
        timing="sequence",
        inflate=0.5,
        capacity=CAPACITY,
        order="shuffle",
        seed=2,
    )
    assert [tj.key for tj in other.jobs] != names


def test_window_gangs_keep_every_pod():
    trace = openb_trace(gangs="window", gang_window=60)
    assert sum(tj.job.tasks[0].replicas for tj in trace.jobs) == 8152
    assert 7000 < len(trace) < 8152
    big = max(trace.jobs, key=lambda tj: tj.job.tasks[0].replicas)
    assert big.job.min_available == big.job.tasks[0].replicas > 1


def test_qos_priority_declares_its_classes():
    trace = openb_trace(qos_priority=True, timing="sequence")
    assert {pc.name for pc in trace.priority_classes} == {"high", "normal", "low"}
    assert {tj.job.priority_class for tj in trace.jobs} == {"high", "normal", "low"}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"gpu_sharing": "half"}, "gpu_sharing"),
        ({"inflate": 1.3}, "capacity"),
        ({"order": "random"}, "order"),
    ],
)
def test_bad_options_are_errors_naming_the_option(kwargs, field):
    with pytest.raises(InputError, match=field):
        openb_trace(**kwargs)


def test_a_csv_without_a_required_column_is_an_input_error(tmp_path):
    path = tmp_path / "pods.csv"
    path.write_text("name,cpu_milli\np,1\n")
    with pytest.raises(InputError, match="missing column"):
        openb_trace(path)

"""The openb trace reader: every pod, sharing modes, gangs, FGD's tuning, timing and order."""

from __future__ import annotations

import time

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


OPENB_HEADER = ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
                "deletion_time,scheduled_time\n")


def pod_list(tmp_path, *lines: str) -> str:
    path = tmp_path / "pods.csv"
    path.write_text(OPENB_HEADER + "".join(f"{line}\n" for line in lines))
    return str(path)


def pod(name="p", cpu="1000", memory="2048", gpus="1", milli="1000", created="0"):
    return f"{name},{cpu},{memory},{gpus},{milli},,LS,Running,{created},100,{created}"


@pytest.mark.parametrize(
    ("line", "words"),
    [
        (pod(cpu="9" * 40), ["Pod/p", "line 2: cpu_milli", "expected an integer in [0, "]),
        (pod(gpus="-1"), ["line 2: num_gpu", "'-1'"]),
        (pod(memory="-2048"), ["line 2: memory_mib"]),
        (pod(cpu="-5"), ["line 2: cpu_milli"]),
        (pod(memory="8796093023"), ["line 2: memory_mib"]),  # more than MAX_BYTES bytes
        (pod(created="soon"), ["line 2: creation_time", "'soon'"]),
        (pod(name="p" * 401), ["line 2: name", "401 characters"]),
        (pod(name=""), ["line 2: name", "must not be empty"]),
        (pod(name="a b"), ["line 2: name", "letters, digits"]),
    ],
)
def test_bad_pods_are_one_line_errors_naming_file_line_and_column(tmp_path, line, words):
    path = pod_list(tmp_path, line)
    with pytest.raises(InputError) as info:
        openb_trace(path)
    message = str(info.value)
    assert message.startswith(path) and "\n" not in message
    assert all(w in message for w in words), message


def test_a_pod_name_twice_is_refused_not_replayed_forever(tmp_path):
    path = pod_list(tmp_path, pod("p1"), pod("p2", created="5"), pod("P1", created="50"))
    with pytest.raises(InputError, match="line 4: name: duplicate pod name .first on line 2"):
        openb_trace(path)


def test_a_gang_name_that_is_another_pods_name_is_refused(tmp_path):
    path = pod_list(tmp_path, pod("a"), pod("a2", created="1"), pod("a-x2", cpu="5", created="9"))
    assert len(openb_trace(path)) == 3
    with pytest.raises(InputError, match="Job/default/a-x2: name: duplicate job"):
        openb_trace(path, gangs="window")  # a and a2 become the gang a-x2


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"inflate": 1e12}, "inflate: expected a number in (0, 10]"),
        ({"inflate": "1e12"}, "inflate: expected a number in (0, 10]"),
        ({"inflate": float("nan")}, "inflate"),
        ({"inflate": 0}, "inflate"),
        ({"inflate": 9.9, "capacity": 1e9}, "more than 250,000 jobs"),
        ({"inflate": 1.0, "capacity": float("inf")}, "capacity"),
        ({"seed": -1}, "seed"),
        ({"max_gang": 0}, "max_gang"),
        ({"gang_window": float("nan")}, "gang_window"),
        ({"qos_priority": "yes"}, "qos_priority"),
    ],
)
def test_options_that_multiply_work_are_bounded_at_once(kwargs, words):
    start = time.perf_counter()
    with pytest.raises(InputError) as info:
        openb_trace(**{"capacity": CAPACITY, **kwargs})
    assert words in str(info.value) and time.perf_counter() - start < 5


def test_inflating_a_trace_without_gpu_pods_is_refused(tmp_path):
    path = pod_list(tmp_path, pod(gpus="0", milli="0"))
    with pytest.raises(InputError, match="no pod of the trace asks for a GPU"):
        openb_trace(path, inflate=1.0, capacity=8)

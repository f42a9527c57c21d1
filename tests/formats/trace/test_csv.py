"""The flat CSV trace: rows streamed, one reader call per shape, one-line errors naming the line."""

from __future__ import annotations

import time

import pytest

from toposolve.core.errors import InputError
from toposolve.core.limits import MAX_CSV_CELL
from toposolve.formats.trace import rows
from toposolve.formats.trace.csv import load_csv_trace

HEADER = "name,arrival,duration,replicas,gpu,topology,tier\n"


def write(tmp_path, text: str | bytes, name: str = "trace.csv") -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


def refused(path: str) -> InputError:
    with pytest.raises(InputError) as info:
        load_csv_trace(path)
    assert "\n" not in str(info.value) and str(info.value).startswith(path)
    return info.value


def test_lines_of_one_shape_are_copies_under_their_own_names(tmp_path):
    path = write(tmp_path, HEADER + "a,0,5m,8,8,hard,1\nb,30s,,8,8,hard,1\nc,1m,2m,2,4,,\n")
    trace = load_csv_trace(path)
    a, b, c = (tj.job for tj in trace.jobs)
    assert [tj.key for tj in trace.jobs] == ["default/a", "default/b", "default/c"]
    assert [tj.arrival for tj in trace.jobs] == [0.0, 30.0, 60.0]
    assert [tj.duration for tj in trace.jobs] == [300.0, None, 120.0]
    assert a.tasks is b.tasks and a.tasks is not c.tasks  # one shape, one set of tasks
    assert b.network_topology.mode == "hard" and b.network_topology.highest_tier_allowed == 1
    assert b.tasks[0].requests["nvidia.com/gpu"] == 8000 and c.tasks[0].replicas == 2
    assert [j.creation_index for j in (a, b, c)] == [0, 1, 2]


def test_twenty_thousand_lines_load_quickly(tmp_path):
    lines = "".join(f"j-{i},{i},1h,{1 + i % 4},8,soft,1\n" for i in range(20_000))
    path = write(tmp_path, HEADER + lines)
    start = time.perf_counter()
    trace = load_csv_trace(path)
    assert time.perf_counter() - start < 10  # the per-line reader took 3-4 s unloaded
    assert len(trace) == 20_000 and trace.jobs[-1].key == "default/j-19999"
    assert len({id(tj.job.tasks) for tj in trace.jobs}) == 4  # four shapes


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (HEADER + "a,0,5m,8,8,hard,1\nb,0,5m,8,8,hard,x\n", ["line 3: tier", "'x'"]),
        (HEADER + "a,0,5m,8,8,hard,1\nb,soon,5m,8,8,hard,1\n",
         ["Job/default/b", "line 3: arrival"]),
        (HEADER + "a,0,5m,8,8,hard,1\nb,0,-5m,8,8,hard,1\n", ["line 3: duration"]),
        (HEADER + "a,0,5m,8,8,wavy,1\n", ["Job/default/a", "line 2: networkTopology.mode"]),
        (HEADER + "a,0,1m,8,8,,\n,0,1m,8,8,,\n", ["line 3: name", "must not be empty"]),
        (HEADER + f"{'n' * 401},0,1m,8,8,,\n", ["line 2: name", "401 characters"]),
        (HEADER + '"a\nb",0,1m,8,8,,\n', ["Job/default/a\\nb", "line 2: name"]),
        (HEADER + "a{i},0,1m,8,8,,\n", ["line 2: name", "letters, digits"]),
        (HEADER + "a,0,1m,8,8,,\nb,0,1m,8,8,,\na,5,1m,8,8,,\n", ["line 4: name",
                                                               "first on line 2"]),
        (HEADER + "a,0,1m,8,8,,,surplus\n", ["line 2", "8 cells, the header has 7"]),
        ("name,arrival,replicas,name\n", ["header", "'name' appears twice"]),
        ("name,arrival,replicas\na,0," + "9" * 40 + "\n", ["Job/default/a", "line 2: "]),
    ],
)
def test_bad_lines_are_one_line_errors_naming_file_line_and_field(tmp_path, text, words):
    message = str(refused(write(tmp_path, text)))
    assert all(w in message for w in words), message


def test_a_cell_over_the_limit_names_the_line(tmp_path):
    path = write(tmp_path, HEADER + "a,0,1m,8,8,,\nb,0,1m," + "1" * (MAX_CSV_CELL + 1) + ",8,,\n")
    message = str(refused(path))
    assert "line 3" in message and f"{MAX_CSV_CELL:,} characters" in message
    assert "_csv" not in message


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (HEADER.encode() + b"a,0,1m,8,8,,\n\xff\xfe,0,1m,8,8,,\n", "line 3: not UTF-8"),
        (HEADER.encode() + b"a,0,1m,8\x00,8,,\n", "line 2: replicas"),
    ],
)
def test_bytes_that_are_no_csv_text_are_one_line(tmp_path, data, words):
    assert words in str(refused(write(tmp_path, data)))


def test_a_byte_order_mark_and_blank_lines_are_fine(tmp_path):
    path = write(tmp_path, ("\ufeff" + HEADER + "a,0,1m,8,8,,\n\n\nb,0,1m,8,8,,\n").encode())
    assert [tj.key for tj in load_csv_trace(path).jobs] == ["default/a", "default/b"]


def test_more_rows_than_the_limit_are_refused_before_any_is_read(tmp_path, monkeypatch):
    monkeypatch.setattr(rows, "MAX_TRACE_JOBS", 3)
    body = "".join(f"j{i},0,1m,8,8,,\n" for i in range(3))
    assert len(load_csv_trace(write(tmp_path, HEADER + body))) == 3
    unterminated = write(tmp_path, HEADER + body + "j3,0,1m,8,8,,", "four.csv")
    assert "more than 3 rows" in str(refused(unterminated))

"""``distinct_task_names``: the first task of a name keeps it, later ones ``<name>-<k>``."""

from __future__ import annotations

from toposolve.core.instance import Task
from toposolve.formats.volcano.podgroup import distinct_task_names


def names(*given: str) -> list[str]:
    return [t.name for t in distinct_task_names([Task(name=n, replicas=1) for n in given])]


def test_names_without_a_clash_are_kept():
    assert names("a", "b", "c") == ["a", "b", "c"]


def test_later_tasks_of_a_name_count_up_from_two_in_order():
    assert names("a", "b", "a", "a", "b") == ["a", "b", "a-2", "a-3", "b-2"]


def test_a_suffix_another_task_holds_is_skipped():
    # a SubGroup really named ``a-2``, listed after the clash, keeps its name
    assert names("a", "a", "a-2", "a") == ["a", "a-3", "a-2", "a-4"]


def test_renamed_tasks_keep_everything_but_their_name_and_keep_it_as_their_role():
    first, second = Task(name="w", replicas=1), Task(name="w", replicas=2, labels={"x": "y"})
    out = distinct_task_names([first, second])
    assert out[0] is first
    assert out[1].model_dump(exclude={"name", "role"}) == second.model_dump(
        exclude={"name", "role"})
    assert (out[1].name, out[1].role, out[1].role_name) == ("w-2", "w", "w")
    assert out[1].labels_of(0)["volcano.sh/task-spec"] == "w"  # the label still names the role


def test_a_renamed_task_keeps_the_role_it_already_had():
    tasks = [Task(name="w", replicas=1, role="r"), Task(name="w", replicas=1, role="r")]
    assert [t.role_name for t in distinct_task_names(tasks)] == ["r", "r"]

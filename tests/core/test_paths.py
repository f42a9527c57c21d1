"""Bundled data is reachable through the package (a symlink in a checkout, a copy when
installed); output files are written all or nothing."""

import errno
import os
import stat
from pathlib import Path

import pytest

from toposolve.core.errors import InputError
from toposolve.core.paths import (
    DEFAULT_INSTANCE,
    MODELS_DIR,
    TRACE_DIR,
    replacing,
    write_file,
)
from toposolve.policy.profiles import load_profile


def test_bundled_data_is_found_through_the_package():
    assert DEFAULT_INSTANCE.is_file()
    assert {p.stem for p in MODELS_DIR.glob("*.yaml")} >= {
        "volcano-default",
        "lexicographic",
        "weighted",
        "preemption",
    }
    assert (TRACE_DIR / "openb_gpu_nodes.csv").is_file()
    assert load_profile("preemption").name == "preemption"


# -- writing output files all or nothing (issue 19 §3) -----------------------------------------


def test_write_file_replaces_the_target_and_keeps_its_permissions(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old\n")
    target.chmod(0o640)
    write_file(target, "new\n")
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_new_file_gets_the_usual_permissions(tmp_path):
    umask = os.umask(0o022)
    try:
        write_file(tmp_path / "new.yaml", b"x: 1\n")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.yaml").stat().st_mode) == 0o644


def test_a_full_disk_midway_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    target = tmp_path / "plan.json"
    target.write_text("the old plan\n")
    calls = []

    with pytest.raises(InputError) as err:
        with replacing(target) as out:
            real_write = out.write

            def write_then_fill_up(text):
                calls.append(text)
                if len(calls) > 1:  # the first chunk lands, the second finds the disk full
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                return real_write(text)

            monkeypatch.setattr(out, "write", write_then_fill_up)
            out.write("half of ")
            out.flush()
            out.write("the new plan\n")
    assert len(calls) == 2
    assert str(err.value) == f"{target}: cannot write: No space left on device"
    assert target.read_text() == "the old plan\n"
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"]


def test_a_failing_fsync_also_leaves_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "records.json"
    target.write_text("old\n")
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(errno.EIO, "I/O")))
    with pytest.raises(InputError, match="cannot write: I/O"):
        write_file(target, "new\n")
    assert target.read_text() == "old\n" and len(list(tmp_path.iterdir())) == 1


def test_any_error_in_the_writer_removes_the_temporary(tmp_path):
    target = tmp_path / "fig.png"
    with pytest.raises(ValueError, match="unsupported"):
        with replacing(target, "wb") as out:
            assert out.name.endswith(".png")  # path-based writers infer the format from it
            raise ValueError("unsupported format")
    assert list(tmp_path.iterdir()) == []


def test_a_symbolic_link_stays_a_link_to_the_new_content(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old\n")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_file(link, "new\n")
    assert link.is_symlink() and real.read_text() == "new\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
def test_a_device_is_written_in_place_not_replaced():
    with pytest.raises(InputError, match="/dev/full: cannot write: No space left on device"):
        write_file("/dev/full", "x" * 100_000)
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_missing_directory_is_one_input_error(tmp_path):
    with pytest.raises(InputError, match="cannot write: No such file or directory"):
        write_file(tmp_path / "no" / "out.json", "x")

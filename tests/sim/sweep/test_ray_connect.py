"""A Ray address that does not answer is refused within RAY_CONNECT_TIMEOUT (no Ray needed)."""

from __future__ import annotations

import socket
import time

import pytest

from toposolve.core.errors import InputError
from toposolve.core.limits import RAY_CONNECT_TIMEOUT
from toposolve.sim.sweep import ray_runner, run_sweep


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_refused_address_is_one_line_at_once(small_spec):
    address = f"127.0.0.1:{closed_port()}"
    start = time.perf_counter()
    with pytest.raises(InputError) as err:
        run_sweep(small_spec, ray=address, progress=lambda line: None)
    assert time.perf_counter() - start < 5
    assert str(err.value) == f"--ray: {address}: cannot connect: Connection refused"


def test_an_address_that_never_answers_times_out_after_the_documented_limit(monkeypatch):
    waited = []

    def silent(address, timeout):
        waited.append((address, timeout))
        raise TimeoutError

    monkeypatch.setattr(ray_runner.socket, "create_connection", silent)
    with pytest.raises(InputError, match=f"no answer within {RAY_CONNECT_TIMEOUT:g} s"):
        ray_runner.check_reachable("ray://10.0.0.1:10001")
    assert waited == [(("10.0.0.1", 10001), RAY_CONNECT_TIMEOUT)]


def test_an_answering_address_passes_and_local_auto_are_left_to_ray():
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        ray_runner.check_reachable(f"127.0.0.1:{server.getsockname()[1]}", timeout=5)
    ray_runner.check_reachable("local")
    ray_runner.check_reachable("auto")


@pytest.mark.parametrize("address", ["nohost", "host:", "host:99999", ":6379"])
def test_a_malformed_address_is_refused(address):
    with pytest.raises(InputError, match="expected local, auto or"):
        ray_runner.check_reachable(address)

"""``--scheduler ADDRESS`` / ``DPAUDIT_SCHEDULER``: a run on an existing Dask cluster gives the same
numbers as in one process; conflicting or unreachable settings are one-line errors (exit 2)."""

from __future__ import annotations

import json

import pytest

from dpaudit.cli.main import main

RUN = ["run", "ts", "-T", "3000", "-R", "4", "--audit-trials", "300", "--json"]


def _numbers(out: str) -> dict:
    """Everything but the timings."""

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if k not in ("seconds", "timings", "timing")}
        return [strip(v) for v in x] if isinstance(x, list) else x

    d = strip(json.loads(out))
    assert d["audit"]["verdict"] and d["regret"]
    return d


@pytest.fixture(scope="module")
def scheduler():
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        yield cluster.scheduler_address


@pytest.mark.slow
def test_same_numbers_on_a_dask_scheduler(capsys, scheduler, monkeypatch):
    assert main(RUN) == 0
    alone = _numbers(capsys.readouterr().out)
    assert main([*RUN, "--scheduler", scheduler]) == 0
    assert _numbers(capsys.readouterr().out) == alone
    monkeypatch.setenv("DPAUDIT_SCHEDULER", scheduler)
    assert main(RUN) == 0
    assert _numbers(capsys.readouterr().out) == alone


def test_scheduler_and_workers_conflict(capsys):
    assert main([*RUN, "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "either --workers" in err[0] and "--scheduler" in err[0]

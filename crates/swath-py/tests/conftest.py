"""Fixtures: the swath command to compare with, generated logs, a Dask cluster of two
worker processes with one thread each."""

import gzip
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def swath_bin() -> str:
    """The swath command (SWATH_BIN, else the workspace's debug build)."""
    path = os.environ.get("SWATH_BIN") or str(ROOT / "target" / "debug" / "swath")
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path}: no swath command (cargo build, or set SWATH_BIN)")
    return path


@pytest.fixture(scope="session")
def cli(swath_bin):
    """Runs swath with arguments in a directory; returns (stdout, stderr, status)."""

    def run(*args, cwd=None, env=None):
        e = dict(os.environ, LC_ALL="C.UTF-8")
        e.update(env or {})
        p = subprocess.run([swath_bin, *args], capture_output=True, cwd=cwd, env=e)
        return p.stdout, p.stderr, p.returncode

    return run


@pytest.fixture(scope="session")
def logs(tmp_path_factory, cli):
    """A directory of generated access logs: two plain, one gzip (two members), one empty,
    one without a final newline, one with CR LF line ends."""
    d = tmp_path_factory.mktemp("logs")
    for name, size, seed in [("a.log", "600K", "1"), ("b.log", "300K", "2"), ("c.log", "200K", "3")]:
        _, err, status = cli("gen", "log", "--damaged", "--seed", seed, size, str(d / name))
        assert status == 0, err
    data = (d / "c.log").read_bytes()
    half = len(data) // 2
    with open(d / "c.log.gz", "wb") as f:
        f.write(gzip.compress(data[:half]) + gzip.compress(data[half:]))
    (d / "c.log").unlink()
    (d / "empty.log").write_bytes(b"")
    b = (d / "b.log").read_bytes()
    (d / "d.log").write_bytes(b[: len(b) // 3].rstrip(b"\n"))
    (d / "e.log").write_bytes(b[len(b) // 3 :].replace(b"\n", b"\r\n"))
    return d


@pytest.fixture(scope="session")
def client():
    """A LocalCluster of two worker processes, one thread each."""
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    )
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture
def chdir_logs(logs, monkeypatch):
    monkeypatch.chdir(logs)
    return logs



@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under SWATH_TEST_STRICT=1 (scripts/test, after installing every tool the tests
    need) a skipped test is a check never made, and so a failure."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("SWATH_TEST_STRICT") == "1" and report.skipped:
        report.outcome = "failed"
        report.longrepr = f"skipped under SWATH_TEST_STRICT=1: {report.longrepr}"


@pytest.fixture(scope="session")
def run_python_unprivileged():
    """Runs Python code in a new process that file modes apply to: as `nobody` (through
    setpriv, which scripts/test-deps installs) when the tests run as root, since root reads
    any file; returns the CompletedProcess (text)."""
    import shutil
    import sys

    def run(code):
        cmd = [sys.executable, "-c", code]
        if os.geteuid() == 0:
            setpriv = shutil.which("setpriv")
            if setpriv is None:
                pytest.fail("setpriv (util-linux) is needed to drop root: scripts/test-deps")
            cmd = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True)

    return run

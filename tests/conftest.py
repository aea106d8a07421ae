"""Shared fixtures: the location of ../shared/data (skipped with a reason when it is absent), the fake
OpenAI-compatible server of the generation tests, and a real PostgreSQL server."""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real public data sets beside the checkout; tests that need them skip when they are absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"real data sets not found at {SHARED_DATA} (a fresh clone has no ../shared); CI provides them")
    return SHARED_DATA


_FAKE_SERVER = "kgprobe_tests_fake_openai_server"


@pytest.fixture(scope="session")
def fake_server():
    """The ``FakeOpenAIServer`` class of ``tests/kgprobe/generation/fake_openai_server.py``, loaded by path once
    (pytest runs with --import-mode=importlib)."""
    if _FAKE_SERVER not in sys.modules:
        path = REPO / "tests" / "kgprobe" / "generation" / "fake_openai_server.py"
        spec = importlib.util.spec_from_file_location(_FAKE_SERVER, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[_FAKE_SERVER] = module  # dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[_FAKE_SERVER].FakeOpenAIServer


def _pg_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def postgres_uri():
    """A PostgreSQL server on a temporary data directory and a free port (Debian's postgresql package), one per test
    session, stopped afterwards; skipped with the reason when the binaries are missing or the server does not start.
    Yields ``postgresql://postgres@127.0.0.1:<port>/postgres`` (trust authentication: any password is accepted)."""
    bindir = _pg_bin()
    if bindir is None:
        pytest.skip("PostgreSQL binaries not found (apt-get install postgresql provides initdb and pg_ctl)")
    as_user: list[str] = []
    if os.geteuid() == 0:  # postgres refuses to run as root: run it as the postgres system user
        runuser = shutil.which("runuser")
        try:
            import pwd

            pw = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no 'postgres' user to start PostgreSQL as")
        if runuser is None:
            pytest.skip("running as root without runuser to start PostgreSQL as another user")
        as_user = [runuser, "-u", "postgres", "--"]
    root = Path(tempfile.mkdtemp(prefix="kgprobe-pg-"))
    data, sock = root / "data", root / "sock"
    sock.mkdir()
    if as_user:
        os.chown(root, pw.pw_uid, pw.pw_gid)
        os.chown(sock, pw.pw_uid, pw.pw_gid)
    port = _free_port()
    try:
        subprocess.run([*as_user, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"],
                       check=True, capture_output=True, timeout=120)
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-w", "-t", "60",
                        "-o", f"-p {port} -k {sock} -c listen_addresses=127.0.0.1 -c fsync=off", "start"],
                       check=True, capture_output=True, timeout=120)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as exc:
        log = (root / "log").read_text(errors="replace")[-500:] if (root / "log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        pytest.skip(f"PostgreSQL did not start: {exc} {getattr(exc, 'stderr', b'')!r} {log}")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60, check=False)
        shutil.rmtree(root, ignore_errors=True)

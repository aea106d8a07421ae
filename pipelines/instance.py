"""The Dagster instance kgprobe's commands use, and the UI started on it.

Dagster reads its instance config from ``$DAGSTER_HOME/dagster.yaml`` and nowhere else. ``kgprobe run`` and
``kgprobe ui`` both use ``DAGSTER_HOME`` when it is set, else ``.dagster_home`` in the working directory, and put
kgprobe's instance config (:data:`INSTANCE_CONFIG`: SQLite storage, the run queue, the GPU tag limit) there when
the folder has none. A ``dagster.yaml`` already there is the user's and is kept; :func:`dagster_home` says when it
differs from the shipped one.

``kgprobe ui`` then becomes ``dg dev`` (the UI, the daemon that starts queued runs, the code server) in the same
process, with SIGINT and SIGTERM restored to their default so that the UI stops on either even when it was started
in the background, where the shell starts it with SIGINT ignored and Dagster would ignore SIGTERM with it.

    >>> home, note = dagster_home({"DAGSTER_HOME": "/tmp/dh"})
    >>> home, (home / "dagster.yaml").exists()
    (PosixPath('/tmp/dh'), True)
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
from collections.abc import MutableMapping
from pathlib import Path

import yaml

from kgprobe.errors import ConfigError

__all__ = ["DEFAULT_HOME", "INSTANCE_CONFIG", "REPO", "dagster_home", "dg_executable", "start_ui", "ui_command"]

REPO = Path(__file__).resolve().parent.parent
#: kgprobe's Dagster instance config, copied into ``DAGSTER_HOME`` (it is not read where it lies: Dagster reads only
#: ``$DAGSTER_HOME/dagster.yaml``).
INSTANCE_CONFIG = Path(__file__).resolve().parent / "dagster.yaml"
#: ``DAGSTER_HOME`` when the variable is not set, relative to the working directory.
DEFAULT_HOME = ".dagster_home"


def dagster_home(environ: MutableMapping[str, str] | None = None, *, cwd: Path | None = None) -> tuple[Path, str | None]:
    """The Dagster home (``DAGSTER_HOME``, else ``.dagster_home`` in ``cwd``), created with kgprobe's instance
    config when it has none, and set in ``environ`` (default ``os.environ``) as an absolute path, as Dagster needs.

    Returns the folder and a note for the user, or ``None``: a ``dagster.yaml`` already in the folder is never
    overwritten, and the note says when its settings differ from :data:`INSTANCE_CONFIG` (an older copy, or the
    user's edits; comments are not compared).
    """
    environ = os.environ if environ is None else environ
    home = Path(environ.get("DAGSTER_HOME") or (cwd or Path.cwd()) / DEFAULT_HOME).resolve()
    if home.exists() and not home.is_dir():
        raise ConfigError(f"DAGSTER_HOME={home} is a file; set DAGSTER_HOME to a folder (or unset it to use "
                          f"{DEFAULT_HOME}/ in the working directory)")
    home.mkdir(parents=True, exist_ok=True)
    target = home / "dagster.yaml"
    note = None
    if not target.exists():
        shutil.copy(INSTANCE_CONFIG, target)
    elif _settings(target) != _settings(INSTANCE_CONFIG):
        note = (f"keeping {target}, which differs from kgprobe's {INSTANCE_CONFIG} (your edits, or an older copy); "
                f"compare them with `diff {INSTANCE_CONFIG} {target}`")
    environ["DAGSTER_HOME"] = str(home)
    return home, note


def _settings(path: Path):
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        return f"unreadable: {exc}"


def dg_executable() -> Path:
    """The ``dg`` command of this Python environment (the ``dagster-dg-cli`` package); a
    :class:`~kgprobe.errors.ConfigError` saying how to install it when it is missing."""
    beside = Path(sys.executable).parent / "dg"
    found = beside if beside.exists() else (Path(p) if (p := shutil.which("dg")) else None)
    if found is None:
        raise ConfigError("the `dg` command (package dagster-dg-cli) is not installed in this environment; "
                          "install kgprobe again (`pip install -e .`) or `pip install 'dagster-dg-cli>=1.13,<1.14'`")
    return found


def ui_command(*, host: str | None = None, port: int | None = None) -> list[str]:
    """The ``dg dev`` command line for the repository's project (``[tool.dg]`` in pyproject.toml)."""
    return [str(dg_executable()), "dev", "--target-path", str(REPO),
            *(["--host", host] if host else []), *(["--port", str(port)] if port else [])]


def start_ui(*, config: Path | None = None, host: str | None = None, port: int | None = None,
             environ: MutableMapping[str, str] | None = None) -> None:
    """Replace this process with ``dg dev`` on kgprobe's Dagster home, for the project config ``config`` (default:
    ``KGPROBE_CONFIG``, else the sample). Does not return."""
    environ = os.environ if environ is None else environ
    home, note = dagster_home(environ)
    if config is not None:
        if not config.is_file():
            raise ConfigError(f"--config {config}: no such file; give the path of a project YAML config")
        environ["KGPROBE_CONFIG"] = str(config.resolve())
    argv = ui_command(host=host, port=port)
    if note:
        print(f"kgprobe: {note}", file=sys.stderr, flush=True)
    print(f"kgprobe: DAGSTER_HOME={home}; starting dg {' '.join(argv[1:])}", flush=True)
    _restore_signals()
    os.execve(argv[0], argv, dict(environ))


def _restore_signals() -> None:
    # A shell starts a background job (`cmd &`) with SIGINT ignored, an ignored signal stays ignored across exec, and
    # Dagster's dev command gives SIGTERM the handler SIGINT has: both would be ignored. With the defaults restored,
    # Python turns SIGINT into KeyboardInterrupt and Dagster shuts its processes down on either signal.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)

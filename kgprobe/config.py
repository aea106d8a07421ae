"""The project config: one YAML file naming the KGs, the warehouse and (in later stages) models and suites.

    >>> cfg = load_config("examples/sample.yaml")
    >>> cfg.kgs["sample"].files

Paths of input files are resolved against the folder of the config file, so a config travels with its data; the
warehouse path is resolved against the working directory, so outputs land where you run kgprobe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kgprobe.errors import ConfigError
from kgprobe.ingest import FORMATS, KGSource

__all__ = ["DEFAULT_CONFIG", "ProjectConfig", "load_config"]

DEFAULT_CONFIG = "examples/sample.yaml"
_KG_KEYS = {
    "format", "triples", "entity_labels", "relation_labels", "entity_types", "type_labels", "temporal", "lenient",
    "header", "encoding", "label_lang",
}
# Sections owned by later stages are kept as given and validated by the stage that reads them.
_STAGE_SECTIONS = {"queries", "subgraph", "fpq", "perturbation", "models", "generation", "scoring", "suites", "report"}
_TOP_KEYS = {"name", "seed", "warehouse", "kgs"} | _STAGE_SECTIONS


@dataclass(frozen=True)
class ProjectConfig:
    """A parsed project config. ``sections`` holds the stage sections (``queries``, ``fpq``, ``models``, ...)."""

    path: Path
    name: str
    seed: int
    warehouse: Path
    kgs: dict[str, KGSource]
    sections: dict[str, Any] = field(default_factory=dict)

    def section(self, name: str) -> dict[str, Any]:
        """A stage section as a dict ({} when absent)."""
        return dict(self.sections.get(name) or {})


def _resolve(base: Path, value: Any, where: str) -> Any:
    if value is None:
        return None
    if isinstance(value, list):
        return [_resolve(base, v, where) for v in value]
    if not isinstance(value, str):
        raise ConfigError(f"{where}: expected a file path (string), got {value!r}")
    p = Path(value).expanduser()
    return p if p.is_absolute() else (base / p)


def load_config(path: str | Path = DEFAULT_CONFIG) -> ProjectConfig:
    """Read and validate a project config; raises :class:`ConfigError` naming the file and key on any mistake."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"project config {path} not found; pass a YAML file such as {DEFAULT_CONFIG}")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the config must be a mapping of sections, got {type(raw).__name__}")
    unknown = set(raw) - _TOP_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown section(s) {sorted(unknown)}; known: {sorted(_TOP_KEYS)}")
    base = path.resolve().parent
    kgs_raw = raw.get("kgs")
    if not isinstance(kgs_raw, dict) or not kgs_raw:
        raise ConfigError(f"{path}: 'kgs' must map at least one KG name to its source (format, triples, ...)")
    kgs: dict[str, KGSource] = {}
    for name, spec in kgs_raw.items():
        where = f"{path}: kgs.{name}"
        if not isinstance(spec, dict):
            raise ConfigError(f"{where}: expected a mapping with format and triples")
        bad = set(spec) - _KG_KEYS
        if bad:
            raise ConfigError(f"{where}: unknown key(s) {sorted(bad)}; known: {sorted(_KG_KEYS)}")
        fmt = spec.get("format", "tsv")
        if fmt not in FORMATS:
            raise ConfigError(f"{where}.format: {fmt!r} is not one of {', '.join(FORMATS)}")
        if "triples" not in spec:
            raise ConfigError(f"{where}: 'triples' (one file or a list) is required")
        kwargs = {k: v for k, v in spec.items() if k not in {"triples", "entity_labels", "relation_labels",
                                                              "entity_types", "type_labels", "temporal"}}
        for key in ("triples", "entity_labels", "relation_labels", "entity_types", "type_labels", "temporal"):
            if key in spec:
                kwargs[key] = _resolve(base, spec[key], f"{where}.{key}")
        kgs[str(name)] = KGSource(name=str(name), **kwargs)
    seed = raw.get("seed", 0)
    if not isinstance(seed, int):
        raise ConfigError(f"{path}: seed must be an integer, got {seed!r}")
    warehouse = Path(raw.get("warehouse", "warehouse/kgprobe.duckdb"))
    return ProjectConfig(
        path=path.resolve(),
        name=str(raw.get("name", path.stem)),
        seed=seed,
        warehouse=warehouse,
        kgs=kgs,
        sections={k: raw[k] for k in _STAGE_SECTIONS if k in raw},
    )

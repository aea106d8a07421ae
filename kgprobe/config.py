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
from kgprobe.kg.ingest import FORMATS, KGSource

__all__ = [
    "DEFAULT_CONFIG",
    "PerturbationSettings",
    "generation_models",
    "generation_settings",
    "perturbation_settings",
    "FPQSettings",
    "ProjectConfig",
    "SubgraphSettings",
    "ScoringSettings",
    "fpq_settings",
    "load_config",
    "scoring_settings",
    "subgraph_settings",
]

DEFAULT_CONFIG = "examples/sample.yaml"
_KG_KEYS = {
    "format", "triples", "entity_labels", "relation_labels", "entity_types", "type_labels", "temporal", "lenient",
    "header", "encoding", "label_lang", "infer_types",
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
    #: per KG, whether to infer entity types from relation keys after loading (for KGs without types)
    infer_types: dict[str, bool] = field(default_factory=dict)

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
    infer: dict[str, bool] = {}
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
                                                              "entity_types", "type_labels", "temporal", "infer_types"}}
        infer[str(name)] = bool(spec.get("infer_types", False))
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
        infer_types=infer,
    )


@dataclass(frozen=True)
class SubgraphSettings:
    """The ``queries`` and ``subgraph`` sections: which KG, which queries, k-hop and PPR parameters."""

    kg: str
    lists: tuple[dict[str, Any], ...] = ()
    files: tuple[dict[str, Any], ...] = ()
    sample: dict[str, Any] | None = None
    fpq_subjects: bool = False
    hops: int = 2
    fanout_cap: int | None = None
    induced: bool = False
    alpha: float = 0.85
    tol: float = 1e-6
    max_iter: int = 100
    threshold: float = 1e-5
    directed: bool = False

    def params(self) -> dict[str, Any]:
        """The parameters that shape the subgraphs (stored with them as lineage)."""
        return {
            "kg": self.kg, "hops": self.hops, "fanout_cap": self.fanout_cap, "induced": self.induced,
            "alpha": self.alpha, "tol": self.tol, "max_iter": self.max_iter, "threshold": self.threshold,
            "directed": self.directed,
        }


def subgraph_settings(cfg: ProjectConfig) -> SubgraphSettings:
    """Validated settings of the subgraph stage; the KG defaults to the first configured one."""
    q = cfg.section("queries")
    sg = cfg.section("subgraph")
    ppr = dict(sg.pop("ppr", None) or {})
    where = f"{cfg.path}"
    known_q = {"kg", "lists", "files", "sample", "fpq_subjects"}
    known_sg = {"hops", "fanout_cap", "induced"}
    known_ppr = {"alpha", "tol", "max_iter", "threshold", "directed"}
    for name, section, known in (("queries", q, known_q), ("subgraph", sg, known_sg), ("subgraph.ppr", ppr, known_ppr)):
        bad = set(section) - known
        if bad:
            raise ConfigError(f"{where}: {name}: unknown key(s) {sorted(bad)}; known: {sorted(known)}")
    kg = str(q.get("kg") or next(iter(cfg.kgs)))
    if kg not in cfg.kgs:
        raise ConfigError(f"{where}: queries.kg {kg!r} is not one of the configured KGs {sorted(cfg.kgs)}")
    files = []
    for i, f in enumerate(q.get("files") or []):
        if not isinstance(f, dict) or "path" not in f:
            raise ConfigError(f"{where}: queries.files[{i}] needs a 'path'")
        files.append({**f, "path": _resolve(cfg.path.parent, f["path"], f"{where}: queries.files[{i}].path")})
    sample = q.get("sample")
    if sample is not None and not isinstance(sample, dict):
        raise ConfigError(f"{where}: queries.sample must be a mapping (per_type, types, seeds_per_query)")
    if not (q.get("lists") or files or sample or q.get("fpq_subjects")):
        raise ConfigError(f"{where}: queries: give at least one of lists, files, sample or fpq_subjects")
    return SubgraphSettings(
        kg=kg,
        lists=tuple(q.get("lists") or ()),
        files=tuple(files),
        sample=sample,
        fpq_subjects=bool(q.get("fpq_subjects", False)),
        hops=int(sg.get("hops", 2)),
        fanout_cap=sg.get("fanout_cap"),
        induced=bool(sg.get("induced", False)),
        alpha=float(ppr.get("alpha", 0.85)),
        tol=float(ppr.get("tol", 1e-6)),
        max_iter=int(ppr.get("max_iter", 100)),
        threshold=float(ppr.get("threshold", 1e-5)),
        directed=bool(ppr.get("directed", False)),
    )


@dataclass(frozen=True)
class FPQSettings:
    """The ``fpq`` section: KG, domains (types and relation lists), sample size, edit methods, question writing."""

    kg: str
    domains: dict[str, Any]
    n_per_domain: int = 100
    methods: tuple[str, ...] = ("NSC", "NDC", "NNSC", "NNDC", "NNSR", "NNDR")
    max_hops: int = 5
    questions: str = "templates"
    templates: Path | None = None
    formats: tuple[str, ...] = ("yn", "wh")
    #: Hops follow edge direction (head -> tail from the subject), as the paper's released paths do.
    directed: bool = True
    #: NSC/NDC: draw the hop first, then an object at it ("uniform_hop"), or uniformly over all candidates.
    hop_sampling: str = "uniform_hop"


def fpq_settings(cfg: ProjectConfig) -> FPQSettings:
    """Validated settings of the KG-FPQ stage. ``domains`` and ``templates`` may be YAML files next to the config."""
    f = cfg.section("fpq")
    where = f"{cfg.path}: fpq"
    known = {"kg", "domains", "n_per_domain", "methods", "max_hops", "questions", "templates", "formats", "directed",
             "hop_sampling"}
    bad = set(f) - known
    if bad:
        raise ConfigError(f"{where}: unknown key(s) {sorted(bad)}; known: {sorted(known)}")
    kg = str(f.get("kg") or next(iter(cfg.kgs)))
    if kg not in cfg.kgs:
        raise ConfigError(f"{where}.kg: {kg!r} is not one of the configured KGs {sorted(cfg.kgs)}")
    domains = f.get("domains")
    if isinstance(domains, str):
        dpath = _resolve(cfg.path.parent, domains, f"{where}.domains")
        if not dpath.is_file():
            raise ConfigError(f"{where}.domains: file {dpath} not found")
        domains = yaml.safe_load(dpath.read_text(encoding="utf-8"))
    if not isinstance(domains, dict) or not domains:
        raise ConfigError(f"{where}.domains: a mapping of domain -> types (or a YAML file holding one) is required")
    questions = f.get("questions", "templates")
    if questions != "templates":
        raise ConfigError(f"{where}.questions: {questions!r} is not available; use 'templates' (LLM-written questions "
                          "need the generation stage)")
    templates = f.get("templates")
    if templates is None:
        raise ConfigError(f"{where}.templates: a YAML file of per-relation yn/wh templates is required")
    methods = tuple(f.get("methods") or FPQSettings.methods)
    unknown = [m for m in methods if m not in FPQSettings.methods]
    if unknown:
        raise ConfigError(f"{where}.methods: unknown {unknown}; use some of {list(FPQSettings.methods)}")
    formats = tuple(f.get("formats") or ("yn", "wh"))
    if not set(formats) <= {"yn", "wh"}:
        raise ConfigError(f"{where}.formats: use yn and/or wh, got {list(formats)}")
    directed = f.get("directed", True)
    if not isinstance(directed, bool):
        raise ConfigError(f"{where}.directed: true (hops follow head -> tail, the default) or false, got {directed!r}")
    hop_sampling = f.get("hop_sampling", "uniform_hop")
    if hop_sampling not in ("uniform_hop", "uniform_candidate"):
        raise ConfigError(f"{where}.hop_sampling: use uniform_hop (the default) or uniform_candidate, "
                          f"got {hop_sampling!r}")
    return FPQSettings(
        kg=kg,
        domains=domains,
        n_per_domain=int(f.get("n_per_domain", 100)),
        methods=methods,
        max_hops=int(f.get("max_hops", 5)),
        questions=questions,
        templates=_resolve(cfg.path.parent, templates, f"{where}.templates"),
        formats=formats,
        directed=directed,
        hop_sampling=hop_sampling,
    )


def generation_models(cfg: ProjectConfig) -> list[Any]:
    """The validated ``models`` list (:class:`kgprobe.generation.ModelSpec`), with the ``generation`` section's
    sampling defaults; [] when no models are configured."""
    from kgprobe.generation import model_specs

    models = cfg.sections.get("models") or []
    defaults = {k: v for k, v in cfg.section("generation").items() if k in ("n", "temperature", "top_p", "max_tokens", "seed")}
    try:
        return model_specs(models, defaults=defaults)
    except ConfigError as exc:
        raise ConfigError(f"{cfg.path}: {exc}") from exc


def generation_settings(cfg: ProjectConfig) -> dict[str, Any]:
    """The ``generation`` section's run options: ``shard_size`` (responses per stored shard), ``limit`` (true
    triples per partition, each with all its questions, for a quick look), ``grounded_limit`` and
    ``grounded_models`` (which models answer with KG context; default: all) and the question ``formats``."""
    g = cfg.section("generation")
    known = {"n", "temperature", "top_p", "max_tokens", "seed", "shard_size", "limit", "formats", "grounded_limit", "grounded_models"}
    bad = set(g) - known
    if bad:
        raise ConfigError(f"{cfg.path}: generation: unknown key(s) {sorted(bad)}; known: {sorted(known)}")
    return {
        "shard_size": int(g.get("shard_size", 64)),
        "limit": g.get("limit"),
        "formats": tuple(g.get("formats") or ("yn", "wh")),
        "grounded_limit": g.get("grounded_limit", g.get("limit")),
        "grounded_models": g.get("grounded_models"),
    }


@dataclass(frozen=True)
class PerturbationSettings:
    """The ``perturbation`` section: methods and levels (partition keys ``none``, ``RS-0.1`` ...) and scorer options."""

    methods: tuple[str, ...] = ("RS", "RR", "ER", "ED")
    levels: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    scorer: dict[str, Any] = field(default_factory=dict)

    kg: str | None = None

    @property
    def keys(self) -> list[str]:
        """``none`` then every method at every level, e.g. ``RS-0.1`` ... ``ED-1.0``."""
        from kgprobe.grounding.perturb import perturbation_keys

        return perturbation_keys(self.methods, self.levels)


def perturbation_settings(cfg: ProjectConfig) -> PerturbationSettings:
    """Validated perturbation methods and levels (all four methods at 0.1 ... 1.0 by default)."""
    p = cfg.section("perturbation")
    known = {"methods", "levels", "scorer", "kg"}
    bad = set(p) - known
    if bad:
        raise ConfigError(f"{cfg.path}: perturbation: unknown key(s) {sorted(bad)}; known: {sorted(known)}")
    methods = tuple(p.get("methods") or PerturbationSettings.methods)
    wrong = [m for m in methods if m not in ("RS", "RR", "ER", "ED")]
    if wrong:
        raise ConfigError(f"{cfg.path}: perturbation.methods: unknown {wrong}; use RS, RR, ER, ED")
    levels = tuple(float(x) for x in (p.get("levels") or PerturbationSettings.levels))
    if any(not 0 < x <= 1 for x in levels):
        raise ConfigError(f"{cfg.path}: perturbation.levels must lie in (0, 1], got {list(levels)}")
    kg = str(p.get("kg") or next(iter(cfg.kgs)))
    if kg not in cfg.kgs:
        raise ConfigError(f"{cfg.path}: perturbation.kg {kg!r} is not one of the configured KGs {sorted(cfg.kgs)}")
    return PerturbationSettings(methods=methods, levels=levels, scorer=dict(p.get("scorer") or {}), kg=kg)


@dataclass(frozen=True)
class ScoringSettings:
    """The ``scoring`` section: the judges of generative answers, the bootstrap, and the unknown-share warning.

    ``judges`` are :class:`kgprobe.generation.ModelSpec` of configured models with judge sampling (one greedy sample
    of at most ``max_tokens`` tokens unless the entry says otherwise); the first judge is the primary one.
    """

    judges: tuple[Any, ...] = ()
    resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0
    unknown_warn: float = 0.2


_JUDGE_KEYS = {"model", "temperature", "top_p", "max_tokens", "seed", "batch_size"}


def scoring_settings(cfg: ProjectConfig) -> ScoringSettings:
    """Validated scoring options. A judge entry is ``{model: <name in models>}`` plus optional ``temperature``
    (default 0, greedy), ``top_p`` (1.0), ``max_tokens`` (8), ``seed`` and ``batch_size``; a bare string is a model
    name. Raises :class:`ConfigError` naming the key for an unknown model or option."""
    from dataclasses import replace

    from kgprobe.generation import SamplingParams

    sc = cfg.section("scoring")
    known = {"judges", "bootstrap", "unknown_warn", "seed"}
    bad = set(sc) - known
    if bad:
        raise ConfigError(f"{cfg.path}: scoring: unknown key(s) {sorted(bad)}; known: {sorted(known)}")
    specs = {m.name: m for m in generation_models(cfg)}
    judges = []
    for position, entry in enumerate(sc.get("judges") or []):
        entry = {"model": entry} if isinstance(entry, str) else entry
        where = f"{cfg.path}: scoring.judges[{position}]"
        if not isinstance(entry, dict) or "model" not in entry:
            raise ConfigError(f"{where}: expected a model name or a mapping with 'model', got {entry!r}")
        unknown = set(entry) - _JUDGE_KEYS
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; known: {sorted(_JUDGE_KEYS)}")
        if entry["model"] not in specs:
            raise ConfigError(f"{where}: model {entry['model']!r} is not in the config's models {sorted(specs)}")
        spec = specs[entry["model"]]
        try:
            params = SamplingParams(n=1, temperature=entry.get("temperature", 0.0), top_p=entry.get("top_p", 1.0),
                                    max_tokens=entry.get("max_tokens", 8), seed=entry.get("seed", cfg.seed))
        except ValueError as exc:
            raise ConfigError(f"{where}: {exc}") from exc
        judges.append(replace(spec, params=params, batch_size=int(entry.get("batch_size", spec.batch_size))))
    names = [j.name for j in judges]
    if len(set(names)) != len(names):
        raise ConfigError(f"{cfg.path}: scoring.judges: a model is listed twice ({names})")
    boot = sc.get("bootstrap") or {}
    if not isinstance(boot, dict) or set(boot) - {"resamples", "confidence"}:
        raise ConfigError(f"{cfg.path}: scoring.bootstrap: expected {{resamples: 1000, confidence: 0.95}}, got {boot!r}")
    resamples, confidence = int(boot.get("resamples", 1000)), float(boot.get("confidence", 0.95))
    if resamples < 1 or not 0 < confidence < 1:
        raise ConfigError(f"{cfg.path}: scoring.bootstrap: resamples must be >= 1 and confidence in (0, 1), got {boot!r}")
    warn = float(sc.get("unknown_warn", 0.2))
    if not 0 <= warn <= 1:
        raise ConfigError(f"{cfg.path}: scoring.unknown_warn must lie in [0, 1], got {warn}")
    return ScoringSettings(judges=tuple(judges), resamples=resamples, confidence=confidence,
                           seed=int(sc.get("seed", cfg.seed)), unknown_warn=warn)

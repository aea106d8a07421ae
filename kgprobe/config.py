"""The project config: one YAML file naming the KGs, the warehouse, the models, each stage's options and the suites.

    >>> cfg = load_config("examples/sample.yaml")
    >>> cfg.kgs["sample"].files, fpq_settings(cfg).max_hops

Every section is a pydantic model that forbids unknown keys, and :class:`ProjectConfig` composes them, so
``kgprobe schema`` (:func:`project_schema`) prints a JSON schema editors complete the YAML with. :func:`load_config`
turns whatever is wrong into one :class:`~kgprobe.errors.ConfigError` whose lines read
``<file>: <dotted.key.path>: <what is wrong>``, e.g. ``sample.yaml: suites.fpq.max_hop: unknown key; did you mean
'max_hops'?``. Which file: :func:`config_path` (``--config``, else ``$KGPROBE_CONFIG``, else
``examples/sample.yaml``), the one rule the CLI, the code location and the project resource share.

Paths of input files are resolved against the folder of the config file, so a config travels with its data, and
must exist when the config loads (a suite's own input files too, through :mod:`kgprobe.suites.settings`); the
warehouse path is resolved against the working directory, so outputs land where you run kgprobe. A key written
twice in one mapping, an empty file and a file that is not UTF-8 are errors too. Suites live under
``suites:`` (``suites: {fpq: {...}}``); a top-level ``fpq:`` is still read, with a :class:`ConfigDeprecationWarning`.
"""

from __future__ import annotations

import ast
import codecs
import difflib
import inspect
import os
import re
import unicodedata
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, fields, replace
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Literal, NotRequired, Required, Union, get_args, get_origin, get_type_hints

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    Strict,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
    with_config,
)
from pydantic_core import PydanticCustomError
from typing_extensions import TypedDict, is_typeddict  # pydantic needs this TypedDict before Python 3.12

from kgprobe.errors import ConfigError
from kgprobe.generation import ModelSpec, SamplingParams, model_specs
from kgprobe.generation.backends import CONFIG_CLASSES
from kgprobe.generation.records import SAMPLING_KEYS
from kgprobe.grounding.perturb import LEVELS as PERTURBATION_LEVELS
from kgprobe.grounding.perturb import METHODS as PERTURBATION_METHODS
from kgprobe.kg.ingest import FORMATS, KGSource
from kgprobe.secrets import register_secret_env
from kgprobe.stages import needed_stages
from kgprobe.suites import SUITES
from kgprobe.suites.fpq.settings import FPQDomain, FPQSettings
from kgprobe.suites.settings import Bool as _Bool
from kgprobe.suites.settings import ConfigPath as _ConfigPath
from kgprobe.suites.settings import Int as _Int
from kgprobe.suites.settings import KGName as _KGName
from kgprobe.suites.settings import Section as _Section
from kgprobe.suites.settings import confined as _confined
from kgprobe.suites.settings import confined_model_entry as _confined_model_entry
from kgprobe.suites.settings import nfc as _nfc
from kgprobe.suites.settings import resolve_path as _resolve_path
from kgprobe.yaml_io import BoundedLoader, load_yaml

__all__ = [
    "CONFIG_ENV",
    "CONFINE_ENV",
    "DEFAULT_CONFIG",
    "BootstrapConfig",
    "ConfigDeprecationWarning",
    "FPQDomain",
    "FPQSettings",
    "GenerationConfig",
    "JudgeConfig",
    "KGConfig",
    "ModelEntry",
    "PPRConfig",
    "PerturbationSettings",
    "ProjectConfig",
    "QueriesConfig",
    "QueryFile",
    "QueryList",
    "QuerySample",
    "ScoringConfig",
    "ScoringSettings",
    "SubgraphConfig",
    "SubgraphSettings",
    "SuitesConfig",
    "config_path",
    "fpq_settings",
    "generation_models",
    "named_models",
    "generation_settings",
    "load_config",
    "model_name_problem",
    "name_skeleton",
    "perturbation_settings",
    "project_schema",
    "scoring_settings",
    "subgraph_settings",
]

DEFAULT_CONFIG = "examples/sample.yaml"
#: The environment variable naming the project config when no ``--config`` is given.
CONFIG_ENV = "KGPROBE_CONFIG"
#: Sections :attr:`ProjectConfig.sections` keeps as written.
_STAGE_SECTIONS = ("queries", "subgraph", "fpq", "perturbation", "models", "generation", "scoring", "suites")
#: How many problems one error message lists before it says how many more there are.
_MAX_PROBLEMS = 10


class ConfigDeprecationWarning(DeprecationWarning):
    """A config written in a layout that still works but will not for long (e.g. a top-level ``fpq:`` section).

    Its own class, so a caller can single it out: ``kgprobe run`` prints it, although Python hides
    DeprecationWarnings outside ``__main__`` by default."""


def config_path(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The project config to read: ``explicit`` (``--config``), else ``$KGPROBE_CONFIG``, else
    ``examples/sample.yaml``, relative paths as given (against the working directory).

    Every entry point calls this, so ``kgprobe run``, ``dagster dev`` and a resource built without a path agree:

        >>> config_path("my.yaml"), config_path()       # the second reads KGPROBE_CONFIG
    """
    return Path(explicit or os.environ.get(CONFIG_ENV) or DEFAULT_CONFIG).expanduser()


# ---------------------------------------------------------------------------------------------------------------------
# value types

# Scalars are checked strictly: YAML already types them, so a quoted "yes" or "5" is a mistake, not a bool or int.


def _number(value: Any) -> Any:
    # PyYAML reads 1e-6 (no dot) as a string; the hand-written checks took it through float(), so this does too
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


_Float = Annotated[float, Strict(), BeforeValidator(_number)]


def _field_docs(cls: type) -> dict[str, str]:
    """The attribute docstrings of a dataclass's fields (the string literal right after a field), by field name:
    what pydantic's ``use_attribute_docstrings`` reads from a model, for the models built from option dataclasses."""
    try:
        tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):  # no source (a frozen app): the keys go without descriptions
        return {}
    body = next((n.body for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.__name__), [])
    docs: dict[str, str] = {}
    for field, after in zip(body, body[1:]):
        if (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name) and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
            docs[field.target.id] = inspect.cleandoc(after.value.value)
    return docs


def _strict(hint: Any) -> Any:
    # option dataclasses (the backends', the triple scorer's) hint plain int/float/bool; check them as strictly as
    # every other scalar
    if hint is int:
        return _Int
    if hint is float:
        return _Float
    if hint is bool:
        return _Bool
    if get_origin(hint) in (Union, UnionType):
        return Union[tuple(_strict(a) for a in get_args(hint))]  # noqa: UP007 - built from a runtime tuple
    return hint


def _below(*keys: Any, message: str) -> PydanticCustomError:
    """An error about a key below the value a validator checks: pydantic gives a validator's error the path of that
    value, and :func:`_located` appends ``keys``, so the message still names the exact key."""
    return PydanticCustomError("kgprobe_below", "{message}", {"below": ".".join(map(str, keys)), "message": message})


def _context(info: ValidationInfo) -> dict[str, Any]:
    # load_config passes {"path", "base"}; ProjectConfig adds the KG and model names for cross-section checks.
    # Validated without it (a test, a schema), every check that needs it is skipped.
    return info.context if isinstance(info.context, dict) else {}


def _one_or_many(value: Any) -> Any:
    if isinstance(value, (str, os.PathLike)):
        return [value]
    if not isinstance(value, (list, tuple)):
        # a ValueError, not a TypeError: pydantic reports only ValueErrors as validation errors
        raise ValueError(f"expected a file path or a list of them, got {value!r}")  # noqa: TRY004
    return value


#: One file path or a list of them.
_ConfigPaths = Annotated[tuple[_ConfigPath, ...], BeforeValidator(_one_or_many, json_schema_input_type=str | list[str])]


def _model_name(value: str, info: ValidationInfo) -> str:
    known = _context(info).get("models")
    if known is not None and value not in known:
        raise ValueError(f"{value!r} is not one of the models listed under models ({', '.join(known) or 'none'})")
    return value


#: A model of ``models`` by name (NFC, as the names under ``models`` are).
_ModelName = Annotated[str, BeforeValidator(_nfc), AfterValidator(_model_name)]

#: What a model name may not hold besides control and invisible format characters: Dagster's partition keys cannot
#: (``|``, ``,``, ``[`` and ``]`` separate a multi-partition key's dimensions, ``...`` marks a range of keys).
_NAME_FORBIDDEN = "|,[]"
_NAME_RULE = ("a model name may hold letters, digits, spaces and any other printable character except | , [ ] and "
              "'...' (Dagster partition keys cannot hold them), and no control or invisible format character (tab, "
              "NUL, line breaks, U+202E and other bidirectional controls, zero-width characters)")
# Cyrillic and Greek letters drawn like Latin ones (Unicode's confusables for the letters of model names); with NFKC
# and case folding they make "gpt-4o" with a Cyrillic "о" the same name as "gpt-4o"
_LOOK_ALIKE = str.maketrans("аеорсухіјѕԁһӏԛԝАВЕКМНОРСТХІЈЅΑΒΕΖΗΙΚΜΝΟΡΤΥΧοικνρυ",
                            "aeopcyxijsdhlqwABEKMHOPCTXIJSABEZHIKMNOPTYXoikvpu")


def model_name_problem(name: str) -> str | None:
    """What makes ``name`` unusable as a model name (see ``_NAME_RULE``), or None."""
    for ch in name:
        category = unicodedata.category(ch)
        if ch in _NAME_FORBIDDEN:
            return f"holds {ch!r}"
        if category[0] == "C" or category in ("Zl", "Zp"):
            return f"holds the control or invisible character U+{ord(ch):04X} ({unicodedata.name(ch, category)})"
    if "..." in name:
        return "holds '...'"
    if name != name.strip():
        return "starts or ends with white space"
    return None


def name_skeleton(name: str) -> str:
    """The form two model names that look the same share: NFKC, look-alike Cyrillic and Greek letters as Latin ones,
    case folded (``"GPT-４o"``, ``"gpt-4о"`` with a Cyrillic o, and ``"gpt-4o"`` all give ``"gpt-4o"``)."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name).translate(_LOOK_ALIKE).casefold())


# ---------------------------------------------------------------------------------------------------------------------
# kgs


class KGConfig(_Section):
    """One entry of ``kgs``: where a KG comes from and how to read it (see :class:`kgprobe.kg.ingest.KGSource`).
    The entry's name is the DuckDB schema the KG is loaded into."""

    format: Literal[FORMATS] = "tsv"
    """How the triple files are written."""
    triples: _ConfigPaths
    """One triples file or a list of them, relative to the config file (.gz is read transparently)."""
    entity_labels: _ConfigPath | None = None
    """Entity key -> label (TSV key<TAB>label or a JSON object)."""
    relation_labels: _ConfigPath | None = None
    """Relation key -> label (TSV or JSON)."""
    entity_types: _ConfigPath | None = None
    """Entity key -> type(s) (TSV rows or a JSON object of lists)."""
    type_labels: _ConfigPath | None = None
    """Type key -> label (TSV or JSON)."""
    temporal: _ConfigPaths | None = None
    """Dated facts (head, relation, tail, start, end) added to the same KG."""
    lenient: _Bool = False
    """Record unparseable rows in `rejects` and load the rest (default: stop at the first one)."""
    header: _Bool | None = None
    """Whether CSV/TSV files start with a header row (default: guess)."""
    encoding: str = "utf-8"
    """Text encoding of the files."""
    label_lang: str = "en"
    """rdfs:label language to use for RDF input."""
    infer_types: _Bool = False
    """Type entities from relation keys after loading (for KGs without types, such as FB15k-237)."""
    require_labels: _Bool = True
    """Reject every question whose text would show an entity or relation by an id-like key (a Wikidata QID, a
    Freebase mid, a number, a hash) for want of a label; the rejects are counted and the run prints the coverage."""

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, value: str) -> str:
        try:
            codecs.lookup(value)
        except LookupError:
            raise ValueError(f"unknown text encoding {value!r}; use one Python knows, e.g. utf-8 or latin-1") from None
        return value

    def source(self, name: str) -> KGSource:
        """The :class:`KGSource` that ingestion reads, named ``name``; keys the file leaves out keep KGSource's
        defaults."""
        return KGSource(name=name, **self.model_dump(exclude_unset=True, exclude={"infer_types", "require_labels"}))


# ---------------------------------------------------------------------------------------------------------------------
# queries and subgraphs


@with_config(ConfigDict(extra="forbid", coerce_numbers_to_str=True, use_attribute_docstrings=True))
class QueryList(TypedDict, total=False):
    """A query given by its seed entities (keys or labels)."""

    id: str
    """The query id (default list-<position>)."""
    text: str
    """The question text, if any."""
    seeds: Required[Annotated[list[str], Field(min_length=1)]]
    """Entity keys or labels the subgraph grows from (numbers are read as keys)."""


@with_config(ConfigDict(extra="forbid", use_attribute_docstrings=True))
class QueryFile(TypedDict, total=False):
    """A CSV file of questions whose ``mention_column`` holds each question's entity mentions."""

    path: Required[_ConfigPath]
    """The CSV file, relative to the config file."""
    mention_column: str
    """Column of entity mentions (default dbpedia_entities)."""
    text_column: str | None
    """Column of question texts (default question)."""
    id_column: str | None
    """Column of query ids (default id)."""
    limit: Annotated[int, Strict(), Field(ge=1)]
    """Read at most this many rows."""


@with_config(ConfigDict(extra="forbid", use_attribute_docstrings=True))
class QuerySample(TypedDict, total=False):
    """A seeded sample of entities per type, one query each."""

    per_type: Annotated[int, Strict(), Field(ge=1)]
    """Entities per type (default 5)."""
    types: list[str]
    """Type labels or keys to sample (default: all types)."""
    seeds_per_query: Annotated[int, Strict(), Field(ge=1)]
    """Seed entities per query (default 1)."""


class QueriesConfig(_Section):
    """The ``queries`` section: the retrieval queries of the subgraph stage."""

    kg: _KGName = Field(None, validate_default=True)
    """The KG to query (default: the first one under kgs)."""
    lists: tuple[QueryList, ...] = ()
    """Queries given by their seed entities."""
    files: tuple[QueryFile, ...] = ()
    """CSV question files."""
    sample: QuerySample | None = None
    """A seeded sample of entities per type."""
    fpq_subjects: _Bool = False
    """One query per KG-FPQ subject (its subgraph is the context of the grounded questions)."""
    okgqa_questions: _Bool = False
    """One query per OKGQA question (the okgqa_question_bank asset): its subgraph is what the question's retrieval searches."""

    @model_validator(mode="after")
    def _some_queries(self) -> QueriesConfig:
        if not (self.lists or self.files or self.sample is not None or self.fpq_subjects or self.okgqa_questions):
            raise ValueError("give at least one of lists, files, sample or fpq_subjects")
        return self


class PPRConfig(_Section):
    """Personalized PageRank pruning of the k-hop subgraphs (the OKGQA defaults)."""

    alpha: _Float = Field(0.85, ge=0, le=1)
    """Damping factor."""
    tol: _Float = Field(1e-6, gt=0)
    """Convergence tolerance."""
    max_iter: _Int = Field(100, ge=1)
    """Most power iterations."""
    threshold: _Float = Field(1e-5, ge=0)
    """Nodes scoring below it are pruned (OKGQA: 1e-5)."""
    directed: _Bool = False
    """Walk edges head -> tail only."""


class SubgraphConfig(_Section):
    """The ``subgraph`` section: k-hop extraction around each query's seeds, then PPR pruning."""

    hops: _Int = Field(2, ge=1)
    """k of the k-hop subgraph."""
    fanout_cap: _Int | None = Field(100, ge=1)
    """Follow at most this many (seeded) distinct neighbours per node and hop (null: all). The default bounds a 2-hop
    subgraph at about 10,000 nodes per seed (100 + 100^2) whatever the KG's hubs, about what the OKGQA authors'
    subgraphs held: their SPARQL endpoint (DBpedia's) answers at most 10,000 rows per query."""
    induced: _Bool = False
    """Keep every KG edge between reached nodes, not only the traversed ones."""
    ppr: PPRConfig = Field(default_factory=PPRConfig)
    """PPR pruning parameters."""


@dataclass(frozen=True)
class SubgraphSettings:
    """The ``queries`` and ``subgraph`` sections as the subgraph stage reads them: which KG, which queries, k-hop
    and PPR parameters. ``lists``, ``files`` and ``sample`` are plain mappings (``files`` paths resolved)."""

    kg: str
    lists: tuple[dict[str, Any], ...] = ()
    files: tuple[dict[str, Any], ...] = ()
    sample: dict[str, Any] | None = None
    fpq_subjects: bool = False
    okgqa_questions: bool = False
    hops: int = 2
    fanout_cap: int | None = 100
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


# ---------------------------------------------------------------------------------------------------------------------
# perturbations


def _scorer_options_model() -> type[BaseModel]:
    # the keys of TrainConfig, typed, so that a typo or a wrong type is reported at its key when the config loads
    from kgprobe.grounding.scorer import MODELS, OPTIMIZERS, TRAININGS, TrainConfig

    hints = get_type_hints(TrainConfig)
    choices = {"model": Literal[MODELS], "training": Literal[TRAININGS], "optimizer": Literal[OPTIMIZERS],
               "device": Literal["auto", "cpu", "cuda"]}
    docs = _field_docs(TrainConfig)
    keys = {f.name: (choices.get(f.name, _strict(hints[f.name])), Field(f.default, description=docs.get(f.name)))
            for f in fields(TrainConfig)}
    return create_model("ScorerOptions", __config__=ConfigDict(extra="forbid"), __doc__=TrainConfig.__doc__,
                        __module__=__name__, **keys)


_ScorerOptions = _scorer_options_model()


def _scorer_options(value: Any) -> Any:
    """The scorer's training options, checked as TrainConfig checks them; the keys as written."""
    from kgprobe.grounding.scorer import ScorerError, TrainConfig

    if not isinstance(value, Mapping):
        return value  # pydantic reports the wrong type
    try:
        options = _ScorerOptions.model_validate(value).model_dump(include=set(value))
    except ValidationError as exc:
        where, text = _located(_relevant(exc.errors(include_url=False))[0], root=_ScorerOptions)
        raise _below(*where, message=text) from exc
    try:
        TrainConfig(**options)
    except ScorerError as exc:  # the ranges TrainConfig checks: "TrainConfig.dim must be a positive integer, ..."
        key, _, text = str(exc).removeprefix("TrainConfig.").partition(" ")
        if key not in options:
            raise ValueError(str(exc)) from exc
        raise _below(key, message=text) from exc
    return options


class PerturbationSettings(_Section):
    """The ``perturbation`` section: OKGQA-P methods and levels (partition keys ``none``, ``RS-0.1`` ...) and the
    triple scorer's training options."""

    methods: tuple[Literal[PERTURBATION_METHODS], ...] = PERTURBATION_METHODS
    """Perturbation methods: RS, RR, ER, ED ([]: grounded answers on the clean subgraphs only, no triple scorer)."""
    levels: tuple[Annotated[_Float, Field(gt=0, le=1)], ...] = Field(PERTURBATION_LEVELS, min_length=1)
    """Shares of the subgraph's triples to perturb, each in (0, 1]."""
    scorer: Annotated[dict[str, Any], BeforeValidator(_scorer_options, json_schema_input_type=_ScorerOptions)] = Field(
        default_factory=dict)
    """Training options of the triple scorer s_G (fields of kgprobe.grounding.scorer.TrainConfig)."""
    kg: _KGName = Field(None, validate_default=True)
    """The KG whose triples train the scorer (default: the first one under kgs)."""
    scorer_train_on: Literal["subgraphs", "kg"] = "subgraphs"
    """What s_G is trained on: ``subgraphs`` (the default, as the OKGQA authors' released code trains theirs on the
    union of the PPR-pruned subgraphs, the graph the perturbations change; bounded by the number of queries, however
    large the KG) or ``kg`` (every triple of the KG: on a KG of millions of triples, hours of CPU and an embedding
    per entity)."""

    @model_validator(mode="before")
    @classmethod
    def _none_is_off(cls, data: Any) -> Any:
        # `perturbation: none` switches grounding off (kgprobe.stages reads the raw section); no levels either
        if isinstance(data, str) and data.strip().lower() == "none":
            return {"methods": []}
        return data

    @property
    def keys(self) -> list[str]:
        """``none`` then every method at every level, e.g. ``RS-0.1`` ... ``ED-1.0``."""
        from kgprobe.grounding.perturb import perturbation_keys

        return perturbation_keys(self.methods, self.levels)


# ---------------------------------------------------------------------------------------------------------------------
# models and generation


class _Sampling(_Section):
    """Sampling parameters; left out, the next level's (model entry -> generation section -> KG-FPQ's defaults)."""

    n: _Int | None = Field(None, ge=1)
    """Samples per prompt (default 3)."""
    temperature: _Float | None = Field(None, ge=0)
    """Sampling temperature; 0 is greedy (default 0.6)."""
    top_p: _Float | None = Field(None, gt=0, le=1)
    """Nucleus sampling mass (default 0.9)."""
    max_tokens: _Int | None = Field(None, ge=1)
    """Most new tokens per sample (default 128)."""
    seed: _Int | None = None
    """Sampling seed (default 0)."""

    def sampling(self) -> dict[str, Any]:
        """The sampling parameters this section sets, as keyword arguments (what :func:`model_specs` takes as
        defaults)."""
        return {k: getattr(self, k) for k in SAMPLING_KEYS if getattr(self, k) is not None}


class _ModelEntry(_Sampling):
    """An entry of ``models``: a name, a backend, sampling overrides and the backend's own options."""

    name: Annotated[str, BeforeValidator(_nfc)] = Field(min_length=1)
    """The model's name in partitions, the leaderboard and the response store; rename it when its weights change.
    Read in Unicode NFC; any printable character but | , [ ] and '...', no control or invisible character."""
    backend: str
    """Which backend runs it."""
    batch_size: _Int | None = Field(None, ge=1)
    """Prompts per backend call (default: the backend's)."""
    limit: _Int | None = Field(None, ge=1)
    """Question groups this model answers per suite and partition (a slice for a slow model); overrides the
    suite's and the generation section's limit (default: theirs)."""
    max_cost_usd: _Float | None = Field(None, ge=0)
    """Dollars this model may spend over all runs (the stored costs); generation stops before passing it and the
    partition fails saying what was spent and what is left; raise it to resume (default: no limit)."""


def _backend_entry(kind: str, options: type) -> type[_ModelEntry]:
    # One model per backend, built from the backend's option dataclass, so the schema lists exactly the keys that
    # backend takes and a new backend needs no edit here; a key's description is its field's docstring.
    hints = get_type_hints(options)
    docs = _field_docs(options)
    summary = " ".join((options.__doc__ or "").strip().split("\n\n")[0].split())
    described = f"{kind}: {summary[:1].lower()}{summary[1:]}" if summary else kind
    extra: dict[str, Any] = {"backend": (Literal[kind], Field(description=described))}
    for f in fields(options):
        description = docs.get(f.name)
        if f.default is not MISSING:
            default: Any = Field(f.default, description=description)
        elif f.default_factory is not MISSING:
            default = Field(default_factory=f.default_factory, description=description)
        else:
            default = Field(description=description)
        extra[f.name] = (_strict(hints[f.name]), default)
    name = options.__name__.removesuffix("Config") + "ModelEntry"
    return create_model(name, __base__=_ModelEntry, __doc__=options.__doc__, __module__=__name__, **extra)


_BACKEND_ENTRIES = tuple(_backend_entry(kind, cls) for kind, cls in CONFIG_CLASSES.items())
#: An entry of ``models``; its ``backend`` decides which keys it may have.
ModelEntry = Annotated[Union[_BACKEND_ENTRIES], Field(discriminator="backend")]  # noqa: UP007 - a runtime tuple


class GenerationConfig(_Sampling):
    """The ``generation`` section: sampling defaults of every model, and run options."""

    shard_size: _Int = Field(4096, ge=1)
    """Most responses per stored shard (answers are stored as they arrive; this only splits large batches, and
    every shard costs a file, two fsyncs and a read)."""
    max_failed_share: _Float = Field(0.0, ge=0, le=1)
    """Share of a partition's samples that may fail (after retries) with the run still succeeding; failures are
    stored, never scored, and asked again by the next run (default 0: any failure fails the run)."""
    limit: _Int | None = Field(None, ge=1)
    """True triples per closed-book partition, each with all its questions, for a quick look (default: all)."""
    formats: tuple[Literal["yn", "wh"], ...] = Field(("yn", "wh"), min_length=1)
    """Question formats to ask: yn (Yes-No) and/or wh."""
    grounded_limit: _Int | None = Field(None, ge=1)
    """Like limit, for KG-grounded partitions (default: limit)."""
    grounded_models: tuple[_ModelName, ...] | None = None
    """Models that answer with KG context at every perturbation level (default: all; []: none)."""
    max_run_cost_usd: _Float | None = Field(None, ge=0)
    """Dollars one run may spend over all its models (default: no limit)."""


# ---------------------------------------------------------------------------------------------------------------------
# scoring


class JudgeConfig(_Section):
    """A judge of generative answers: a configured model with judge sampling."""

    model: _ModelName
    """A name under models."""
    temperature: _Float = Field(0.0, ge=0)
    """Default 0: greedy."""
    top_p: _Float = Field(1.0, gt=0, le=1)
    """Nucleus sampling mass."""
    max_tokens: _Int = Field(8, ge=1)
    """Most tokens of a verdict."""
    seed: _Int | None = None
    """Sampling seed (default: the project seed)."""
    batch_size: _Int | None = Field(None, ge=1)
    """Prompts per backend call (default: the model's)."""


def _judge_entry(value: Any) -> Any:
    return {"model": value} if isinstance(value, str) else value


#: A judge entry; a bare string is a model name.
_Judge = Annotated[JudgeConfig, BeforeValidator(_judge_entry, json_schema_input_type=str | JudgeConfig)]


class BootstrapConfig(_Section):
    """The percentile bootstrap of measures that are not proportions."""

    resamples: _Int = Field(1000, ge=1)
    """Bootstrap resamples."""
    confidence: _Float = Field(0.95, gt=0, lt=1)
    """Interval coverage."""


class ScoringConfig(_Section):
    """The ``scoring`` section: judges, the bootstrap, and the unknown-share warning."""

    judges: tuple[_Judge, ...] = ()
    """Judges of WH answers, the first being the primary one; a bare string is a model name."""
    bootstrap: BootstrapConfig = Field(default_factory=BootstrapConfig)
    """Bootstrap options."""
    unknown_warn: _Float = Field(0.2, ge=0, le=1)
    """Warn when more than this share of Yes-No answers reads as unknown."""
    seed: _Int | None = None
    """Bootstrap seed (default: the project seed)."""

    @field_validator("judges")
    @classmethod
    def _each_judge_once(cls, judges: tuple[JudgeConfig, ...]) -> tuple[JudgeConfig, ...]:
        names = [j.model for j in judges]
        if len(set(names)) != len(names):
            raise ValueError(f"a model is listed twice ({', '.join(names)})")
        return judges


@dataclass(frozen=True)
class ScoringSettings:
    """The ``scoring`` section as the scoring stage reads it.

    ``judges`` are :class:`kgprobe.generation.ModelSpec` of configured models with judge sampling (one greedy sample
    of at most ``max_tokens`` tokens unless the entry says otherwise); the first judge is the primary one.
    """

    judges: tuple[ModelSpec, ...] = ()
    resamples: int = 1000
    confidence: float = 0.95
    seed: int = 0
    unknown_warn: float = 0.2


# ---------------------------------------------------------------------------------------------------------------------
# suites


class SuitesConfig(_Section):
    """The ``suites`` section: one entry per enabled suite; a suite left out does not run.

    The built-in suites are fields. A suite registered in :data:`kgprobe.suites.SUITES` from outside (a plug-in, a
    test's toy suite) is accepted under its name and validated by its own ``Settings`` model; any other key is an
    unknown suite."""

    # extra keys are checked against the suite registry below, so "forbid" holds for every name not registered
    model_config = ConfigDict(extra="allow")

    fpq: FPQSettings | None = None
    """KG-FPQ: false-premise questions from edited triples."""

    @model_validator(mode="after")
    def _registered_suites(self, info: ValidationInfo) -> SuitesConfig:
        extra = self.__pydantic_extra__ or {}
        for name, section in list(extra.items()):
            suite = SUITES.get(name)
            if suite is None:
                known = sorted(set(SuitesConfig.model_fields) | set(SUITES))
                close = difflib.get_close_matches(name, known, n=1)
                raise _below(name, message=f"unknown suite; did you mean {close[0]!r}?" if close else
                             f"unknown suite; registered suites: {', '.join(known)}")
            if section is None:
                del extra[name]  # `toy:` with nothing under it reads as "not configured", as for fpq
                continue
            try:
                extra[name] = suite.Settings.model_validate(section, context=info.context)
            except ValidationError as exc:
                where, text = _located(_relevant(exc.errors(include_url=False))[0], root=suite.Settings)
                raise _below(name, *where, message=text) from exc
            # a suite's `kg` names one of `kgs`, whichever suite declares it
            kg, known = getattr(extra[name], "kg", None), _context(info).get("kgs")
            if isinstance(kg, str) and known and kg not in known:
                raise _below(name, "kg",
                             message=f"{kg!r} is not one of the configured KGs ({', '.join(map(str, known))})")
        return self

    def configured(self) -> dict[str, Any]:
        """Suite name -> settings of every suite this section enables."""
        built_in = {name: getattr(self, name) for name in SuitesConfig.model_fields}
        return {k: v for k, v in {**built_in, **(self.__pydantic_extra__ or {})}.items() if v is not None}


# ---------------------------------------------------------------------------------------------------------------------
# the project


class ProjectConfig(_Section):
    """A validated project config: the file's sections as models, plus ``path`` (the file), ``kgs`` (one
    :class:`KGSource` per entry, paths resolved) and ``infer_types``.

    Build it with :func:`load_config`, which passes the file's location as validation context: paths resolve
    against its folder, and KG and model names are checked across sections. :meth:`suite` and :meth:`has_suite`
    find a suite's settings under ``suites:`` (or, deprecated, at the top level). ``sections`` keeps the stage
    sections as written in the file (plain data, paths unresolved) for code that reads them raw; it lists each
    configured suite under its own name too, so ``"fpq" in cfg.sections`` holds for ``suites: {fpq: ...}`` as it
    did for a top-level ``fpq:``.
    """

    name: str | None = Field(None, validate_default=True)
    """The project's name (default: the config file's stem)."""
    seed: _Int = 0
    """The project seed: sampling, edits and bootstrap derive theirs from it."""
    allow_paths_outside_config: _Bool = True
    """Whether input files may lie outside the config file's folder. False: every input path (KG files, side files,
    suite inputs, ERBench specs and their data) must resolve, after ``..`` and symbolic links, inside that folder.
    A daemon or service that loads configs written by others sets KGPROBE_ALLOW_PATHS_OUTSIDE_CONFIG=false, which
    confines every config whatever it says here."""
    warehouse: Path = Path("warehouse/kgprobe.duckdb")
    """The DuckDB warehouse, relative to the working directory (KGPROBE_WAREHOUSE overrides it); a confined config
    (allow_paths_outside_config false) may only name one inside its own folder."""
    kg_configs: dict[str, KGConfig] = Field(default_factory=dict, alias="kgs")
    """KG name -> its source; each KG is loaded into a DuckDB schema of that name. Only a purely relational project
    (its suites all read a relational database, e.g. erbench alone) may leave it out."""
    queries: QueriesConfig | None = None
    """Retrieval queries of the subgraph stage."""
    subgraph: SubgraphConfig = Field(default_factory=SubgraphConfig)
    """k-hop extraction and PPR pruning."""
    perturbation: PerturbationSettings = Field(default_factory=dict, validate_default=True)
    """OKGQA-P perturbations and the triple scorer."""
    models: tuple[ModelEntry, ...] = ()
    """The models to run; each is one partition of the model dimension."""
    generation: GenerationConfig = Field(default_factory=GenerationConfig)
    """Sampling defaults and run options."""
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)
    """Judges, bootstrap and warnings."""
    suites: SuitesConfig = Field(default_factory=SuitesConfig)
    """The enabled suites, one section each."""
    fpq: FPQSettings | None = Field(None, json_schema_extra={"deprecated": True})
    """Deprecated: the KG-FPQ section's old place; move it under suites."""
    narrowed_from: str | None = None
    """Written by `kgprobe run --suites / --models / --limit` into the config it runs (`.<stem>.run.yaml`): the
    config file it narrowed, beside it. The leaderboard and the report read that file's models and suites, so a
    narrowed run still reports every model and suite the warehouse holds. Never set it by hand."""

    _path: Path = PrivateAttr(Path("<config>"))
    _raw: dict[str, Any] = PrivateAttr(default_factory=dict)
    _kgs: dict[str, KGSource] = PrivateAttr(default_factory=dict)
    _models: tuple[ModelSpec, ...] = PrivateAttr(())
    _judges: tuple[ModelSpec, ...] = PrivateAttr(())

    @model_validator(mode="wrap")
    @classmethod
    def _with_names_and_raw(cls, data: Any, handler: Any, info: ValidationInfo) -> ProjectConfig:
        # Sections name KGs and models that other sections define; the names go into the validation context
        # before the fields are validated, so a wrong name is reported at its own key path. The file as written
        # is kept for `sections`.
        context = info.context
        if isinstance(context, dict) and isinstance(data, Mapping):
            context["confine"] = data.get("allow_paths_outside_config") is False or _confined_by_environment()
            kgs, models = data.get("kgs"), data.get("models")
            context["kgs"] = list(kgs) if isinstance(kgs, Mapping) else None
            names = [m.get("name") for m in models if isinstance(m, Mapping)] if isinstance(models, list) else None
            context["models"] = None if names is None else [_nfc(n) for n in names if isinstance(n, str)]
            scoring = data.get("scoring") or {}
            judges = scoring.get("judges", []) if isinstance(scoring, Mapping) else None
            names = None if not isinstance(judges, list) else [j.get("model") if isinstance(j, Mapping) else j
                                                                for j in judges]
            context["judges"] = None if names is None else [_nfc(n) for n in names if isinstance(n, str)]
        config = handler(data)
        if isinstance(data, Mapping):
            config._raw = dict(data)
        return config

    @field_validator("name")
    @classmethod
    def _default_name(cls, value: str | None, info: ValidationInfo) -> str | None:
        path = _context(info).get("path")
        return Path(path).stem if value is None and path is not None else value

    @field_validator("kg_configs")
    @classmethod
    def _some_kgs(cls, value: dict[str, KGConfig]) -> dict[str, KGConfig]:
        # an empty mapping is checked against the enabled suites in _assemble
        bad = [name for name in value if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", name)]
        if bad:
            raise ValueError(f"KG name(s) {bad} must be identifiers (letters, digits, underscores, not starting with a "
                             "digit): each names a DuckDB schema")
        return value

    @field_validator("warehouse")
    @classmethod
    def _confined_warehouse(cls, value: Path, info: ValidationInfo) -> Path:
        try:
            _confined(value.expanduser(), info)  # from the working directory, where it is written
        except ValueError as exc:
            raise ValueError(f"{exc}; or leave warehouse out (the service sets KGPROBE_WAREHOUSE)") from None
        return value

    @field_validator("models")
    @classmethod
    def _model_names_and_paths(cls, models: tuple[Any, ...], info: ValidationInfo) -> tuple[Any, ...]:
        # Names key partitions, the response store and every table a person reads: each must be a valid Dagster
        # partition key, and no two may look alike. A local model's weights are a path like any other.
        seen: dict[str, int] = {}
        for position, entry in enumerate(models):
            problem = model_name_problem(entry.name)
            if problem is not None:
                raise _below(position, "name", message=f"{entry.name!r} {problem}; {_NAME_RULE}")
            twin = seen.get(name_skeleton(entry.name))
            if twin is not None:
                other = models[twin].name
                if other == entry.name:
                    raise _below(position, "name", message=f"{entry.name!r} is used twice; model names must be unique "
                                                           "(they key the response store)")
                raise _below(position, "name", message=f"{entry.name!r} looks the same as models.{twin}.name {other!r} "
                             "(equal after NFKC normalisation, case folding and reading look-alike Cyrillic and Greek "
                             "letters as Latin); model names must tell apart at a glance (they key the response store "
                             "and the leaderboard): rename one")
            seen[name_skeleton(entry.name)] = position
            outside = _confined_model_entry(entry, info)
            if outside is not None:
                raise _below(position, outside[0], message=outside[1])
        return models

    @model_validator(mode="after")
    def _assemble(self, info: ValidationInfo) -> ProjectConfig:
        # Checks across sections, and the runtime objects built from them.
        context = _context(info)
        if context.get("path") is not None:
            self._path = Path(context["path"]).resolve()
        if self.fpq is not None and self.suites.fpq is not None:
            raise _below("fpq", message="the fpq suite is set twice, at the top level and under suites; "
                                        "keep suites.fpq only")
        if self.fpq is not None:
            warnings.warn(f"{context.get('path', 'the project config')}: the top-level 'fpq:' section is deprecated; "
                          "move it under 'suites:' (suites: {fpq: ...})", ConfigDeprecationWarning, stacklevel=2)
        if not self.kg_configs:
            enabled = list(self.suites_configured())
            need = [n for n in enabled if getattr(SUITES.get(n), "needs_kg", True)]
            stages = [k for k in ("queries", "perturbation") if k in self._raw]
            if not enabled or need or stages:
                raise _below("kgs", message="map at least one KG name to its source (format, triples, ...)"
                             + (f"; {', '.join(need + stages)} read(s) a KG" if need or stages else "")
                             + "; only a project whose suites all read a relational database (erbench) may leave "
                               "kgs out")
        self._kgs = {name: kg.source(name) for name, kg in self.kg_configs.items()}
        specs: dict[str, ModelSpec] = {}
        for entry in self.models:
            for key, value in entry.model_dump().items():
                if key.endswith("_env"):  # the variable holding the entry's key: masked in every error text
                    register_secret_env(value)
        for position, entry in enumerate(self.models):
            try:
                (specs[entry.name],) = model_specs([entry.model_dump(exclude_unset=True)],
                                                   defaults=self.generation.sampling())
            except ConfigError as exc:  # a backend's own checks (a reference kind, a timeout)
                text = str(exc).removeprefix(f"model {entry.name!r}: ")
                # the key the backend complains about, where its message names exactly one key the entry sets
                named = [k for k in sorted(entry.model_fields_set - {"name", "backend"})
                         if re.search(rf"(?<![\w.]){re.escape(k)}(?!\w)", text)]
                raise _below("models", position, *named[:len(named) == 1], message=text) from exc
        self._models = tuple(specs.values())
        judges = []
        for position, judge in enumerate(self.scoring.judges):
            if judge.model not in specs:  # only without load_config's context, which checks the name earlier
                raise _below("scoring", "judges", position, "model",
                             message=f"{judge.model!r} is not one of the models ({', '.join(specs) or 'none'})")
            spec = specs[judge.model]
            try:
                seed = self.seed if judge.seed is None else judge.seed
                params = SamplingParams(n=1, temperature=judge.temperature, top_p=judge.top_p,
                                        max_tokens=judge.max_tokens, seed=seed)
            except ValueError as exc:
                raise _below("scoring", "judges", position, message=str(exc)) from exc
            judges.append(replace(spec, params=params, batch_size=judge.batch_size or spec.batch_size))
        self._judges = tuple(judges)
        return self

    @property
    def path(self) -> Path:
        """The config file, absolute."""
        return self._path

    @property
    def kgs(self) -> dict[str, KGSource]:
        """KG name -> the :class:`KGSource` ingestion loads (paths resolved against the config's folder)."""
        return dict(self._kgs)

    @property
    def infer_types(self) -> dict[str, bool]:
        """KG name -> whether to infer entity types from relation keys after loading (for KGs without types)."""
        return {name: kg.infer_types for name, kg in self.kg_configs.items()}

    @property
    def require_labels(self) -> dict[str, bool]:
        """KG name -> whether questions that would show an id-like key instead of a name are rejected."""
        return {name: kg.require_labels for name, kg in self.kg_configs.items()}

    def suites_configured(self) -> dict[str, Any]:
        """Suite name -> validated settings of every suite the config enables (under ``suites:``, or ``fpq`` at the
        deprecated top level)."""
        out = self.suites.configured()
        if self.fpq is not None:
            out["fpq"] = self.fpq
        return out

    def suite(self, name: str) -> Any | None:
        """The validated settings of suite ``name``, or None when the config does not enable it."""
        return self.suites_configured().get(name)

    def has_suite(self, name: str) -> bool:
        """Whether the config enables suite ``name``, i.e. whether its stages have anything to do."""
        return self.suite(name) is not None

    @property
    def sections(self) -> dict[str, Any]:
        """The stage sections as written in the file (plain data), and each enabled suite's section under the
        suite's name as well."""
        out = {k: self._raw[k] for k in _STAGE_SECTIONS if k in self._raw}
        written = self._raw.get("suites") if isinstance(self._raw.get("suites"), Mapping) else {}
        for name in self.suites_configured():
            out.setdefault(name, written.get(name))
        return out


#: Set to ``false`` (or 0, no) where configs come from others (a shared daemon): every config is then confined to its
#: folder, whatever its own ``allow_paths_outside_config`` says.
CONFINE_ENV = "KGPROBE_ALLOW_PATHS_OUTSIDE_CONFIG"


def _confined_by_environment() -> bool:
    return os.environ.get(CONFINE_ENV, "").strip().lower() in ("false", "0", "no")


def load_config(path: str | os.PathLike[str] | None = None) -> ProjectConfig:
    """Read and validate a project config (``path``, else the file :func:`config_path` names).

    Raises :class:`ConfigError` whose lines read ``<file>: <key.path>: <what is wrong>``, naming every problem
    pydantic found (unknown keys with a did-you-mean), or the first one found across sections.
    """
    path = config_path(path)
    if not path.is_file():
        raise ConfigError(f"project config {path} not found; pass a YAML file with --config or {CONFIG_ENV} "
                          f"(default {DEFAULT_CONFIG})")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not a UTF-8 text file ({exc.reason} at byte {exc.start}); save it as "
                          "UTF-8") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the project config ({exc.strerror or exc})") from exc
    raw = load_yaml(text, what=str(path), loader=_UniqueKeyLoader)  # rejects repeated keys and alias bombs
    if raw is None:
        raise ConfigError(f"{path}: the config is empty; give at least a kgs: section (see {DEFAULT_CONFIG})")
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the config must be a mapping of sections (kgs:, models:, suites:, ...), got "
                          f"{type(raw).__name__}")
    try:
        return ProjectConfig.model_validate(raw, context={"path": path, "base": path.resolve().parent})
    except ValidationError as exc:
        raise ConfigError(_message(path, exc)) from exc


class _UniqueKeyLoader(BoundedLoader):
    """A SafeLoader that reports a key given twice in one mapping, which PyYAML would read as the last value, and
    refuses aliases that expand past :data:`~kgprobe.yaml_io.MAX_YAML_VALUES` values."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *defaults` may be overridden key by key; complex keys are left to the constructor
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (str, int, float, bool)) or key is None:
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        "while reading a mapping", node.start_mark, f"found the key {key!r} twice (first at line "
                        f"{seen[key].line + 1}); keep one", key_node.start_mark)
                seen[key] = key_node.start_mark
        return super().construct_mapping(node, deep=deep)


def project_schema() -> dict[str, Any]:
    """The JSON schema of the project config, for editors that complete and check the YAML (``kgprobe schema``).

        >>> project_schema()["properties"]["kgs"]["description"]
    """
    schema = ProjectConfig.model_json_schema(by_alias=True)
    defs = schema.setdefault("$defs", {})
    suites = defs["SuitesConfig"]
    # a registered suite that is not a built-in field gets its own Settings' schema, so editors complete it too
    for name, suite in SUITES.items():
        if name not in SuitesConfig.model_fields:
            sub = suite.Settings.model_json_schema(by_alias=True, ref_template="#/$defs/{model}")
            defs.update(sub.pop("$defs", {}))
            described = suite.title or " ".join((suite.Settings.__doc__ or "").strip().split("\n\n")[0].split())
            suites["properties"][name] = {"anyOf": [sub, {"type": "null"}], "default": None,
                                          **({"description": described} if described else {})}
    suites["additionalProperties"] = False  # every other key is an unknown suite
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema, "title": "kgprobe project config",
            "description": "KGs, warehouse, models, stage options and suites of a kgprobe project (see README.md)."}


# ---------------------------------------------------------------------------------------------------------------------
# the accessors the stages call


def subgraph_settings(cfg: ProjectConfig) -> SubgraphSettings:
    """The subgraph stage's settings from the ``queries`` and ``subgraph`` sections. Without a ``queries`` section
    the queries are the grounded KG-FPQ subjects and the OKGQA questions; raises :class:`ConfigError` when there are
    none of those either."""
    q, sg = cfg.queries, cfg.subgraph
    if q is None:
        # without a queries section, the questions that read subgraphs are the queries: KG-FPQ's subjects when
        # KG-FPQ is grounded, OKGQA's questions when OKGQA runs
        grounded = needed_stages(cfg).grounded_suites
        q = QueriesConfig.model_construct(kg=None, lists=(), files=(), sample=None,
                                          fpq_subjects="fpq" in grounded, okgqa_questions=cfg.has_suite("okgqa"))
        if not (q.fpq_subjects or q.okgqa_questions):
            raise ConfigError(f"{cfg.path}: queries: the subgraph stage needs queries; give at least one of lists, "
                              "files, sample or fpq_subjects")
    return SubgraphSettings(
        kg=str(q.kg or next(iter(cfg.kgs))),
        lists=tuple(dict(e) for e in q.lists),
        files=tuple(dict(f) for f in q.files),
        sample=None if q.sample is None else dict(q.sample),
        fpq_subjects=q.fpq_subjects,
        okgqa_questions=q.okgqa_questions,
        hops=sg.hops,
        fanout_cap=sg.fanout_cap,
        induced=sg.induced,
        alpha=sg.ppr.alpha,
        tol=sg.ppr.tol,
        max_iter=sg.ppr.max_iter,
        threshold=sg.ppr.threshold,
        directed=sg.ppr.directed,
    )


def fpq_settings(cfg: ProjectConfig) -> FPQSettings:
    """The KG-FPQ suite's settings, from ``suites.fpq`` or the deprecated top-level ``fpq``; raises
    :class:`ConfigError` when the suite is not configured (check :meth:`ProjectConfig.has_suite` first)."""
    settings = cfg.suite("fpq")
    if settings is None:
        raise ConfigError(f"{cfg.path}: suites.fpq: the fpq suite is not configured; add suites: {{fpq: {{domains: "
                          "..., templates: ...}}")
    return settings


def generation_models(cfg: ProjectConfig) -> list[ModelSpec]:
    """The configured models as :class:`kgprobe.generation.ModelSpec`, with the ``generation`` section's sampling
    defaults; [] when no models are configured."""
    return list(cfg._models)


def named_models(cfg: ProjectConfig) -> list[str]:
    """The names of the models a user named to evaluate: every configured model but the ``backend: reference``
    baselines (oracle, always-yes, always-no, random), which a measure across models (ERBench's setting 2, the
    entities every evaluated model knows) leaves out."""
    return [m.name for m in generation_models(cfg) if m.backend != "reference"]


def generation_settings(cfg: ProjectConfig) -> dict[str, Any]:
    """The ``generation`` section's run options: ``shard_size`` (responses per stored shard), ``max_failed_share``
    (the share of failed samples a run may end with and still succeed), ``limit`` (true
    triples per partition, each with all its questions, for a quick look), ``grounded_limit`` and
    ``grounded_models`` (which models answer with KG context; None: all) and the question ``formats``."""
    g = cfg.generation
    return {
        "shard_size": g.shard_size,
        "limit": g.limit,
        "formats": g.formats,
        "grounded_limit": g.grounded_limit if "grounded_limit" in g.model_fields_set else g.limit,
        "grounded_models": None if g.grounded_models is None else list(g.grounded_models),
        "max_run_cost_usd": g.max_run_cost_usd,
        "max_failed_share": g.max_failed_share,
    }


def perturbation_settings(cfg: ProjectConfig) -> PerturbationSettings:
    """The perturbation methods and levels (all four methods at 0.1 ... 1.0 by default), the scorer options and
    the KG."""
    return cfg.perturbation


def scoring_settings(cfg: ProjectConfig) -> ScoringSettings:
    """The scoring stage's settings: judges as :class:`ModelSpec` with judge sampling (a judge entry is
    ``{model: <name in models>}`` plus optional ``temperature`` (default 0, greedy), ``top_p`` (1.0),
    ``max_tokens`` (8), ``seed`` (the project's) and ``batch_size``; a bare string is a model name), the bootstrap
    and the unknown-share warning."""
    sc = cfg.scoring
    return ScoringSettings(judges=cfg._judges, resamples=sc.bootstrap.resamples, confidence=sc.bootstrap.confidence,
                           seed=cfg.seed if sc.seed is None else sc.seed, unknown_warn=sc.unknown_warn)


# ---------------------------------------------------------------------------------------------------------------------
# error messages


def _message(path: Path, exc: ValidationError) -> str:
    lines = list(dict.fromkeys(f"{path}: {_problem(err)}" for err in _relevant(exc.errors(include_url=False))))
    more = len(lines) - _MAX_PROBLEMS
    return "\n".join(lines[:_MAX_PROBLEMS] + ([f"{path}: ... and {more} more"] if more > 0 else []))


def _relevant(errors: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``errors`` without the echoes of another: a list with one bad item is also reported "too short" (the bad item
    does not count), which says nothing the item's own error does not."""
    def echo(err: Mapping[str, Any]) -> bool:
        loc = tuple(err["loc"])
        return err["type"] == "too_short" and any(
            len(other["loc"]) > len(loc) and tuple(other["loc"][:len(loc)]) == loc for other in errors)

    return [err for err in errors if not echo(err)] or list(errors)


def _problem(err: Mapping[str, Any]) -> str:
    """One pydantic error as ``key.path: what is wrong``."""
    where, text = _located(err)
    return f"{'.'.join(map(str, where))}: {text}" if where else text


def _located(err: Mapping[str, Any], *, root: Any = None) -> tuple[list[Any], str]:
    """The key path a user wrote (walked from ``root``, the project config by default) and what is wrong there."""
    root = ProjectConfig if root is None else root
    kind, loc, ctx, value = err["type"], tuple(err["loc"]), err.get("ctx") or {}, err.get("input")
    if kind == "missing" and loc and isinstance(loc[-1], int):  # a tuple too short: pydantic names the position
        where, owner = _walk(loc[:-1], root)
        size = len(get_args(_unwrap(owner))) or loc[-1] + 1
        return where, f"must be a list of {size} values"
    if kind in ("missing", "extra_forbidden"):
        where, owner = _walk(loc[:-1], root)
        key = str(loc[-1])
        if kind == "missing":
            return where, f"{key!r} is required{_hint(owner, key)}"
        allowed = _keys(owner)
        close = difflib.get_close_matches(key, allowed, n=1)
        advice = (f"did you mean {close[0]!r}?" if close else
                  f"allowed keys: {', '.join(allowed)}" if allowed else "remove it")
        return [*where, key], f"unknown key; {advice}"
    where, _ = _walk(loc, root)
    discriminator = str(ctx.get("discriminator", "")).strip("'")
    if kind == "kgprobe_below":
        return [*where, *(ctx["below"].split(".") if ctx["below"] else [])], ctx["message"]
    if kind == "union_tag_not_found":
        return where, f"{discriminator!r} is required"
    if kind == "union_tag_invalid":
        return [*where, discriminator], f"must be one of {ctx['expected_tags']}, got {ctx['tag']!r}"
    if kind in ("value_error", "assertion_error"):
        return where, str(ctx.get("error", err["msg"]))
    if kind == "too_short" and ctx.get("min_length", 1) > 1:
        return where, f"must have at least {ctx['min_length']} items, got {ctx.get('actual_length')}"
    text = _WORDING.get(kind, "").format(**ctx) or err["msg"]
    if value is None or isinstance(value, (str, int, float, bool)):
        text += f", got {value!r}"
    return where, text


_WORDING = {
    "greater_than_equal": "must be ≥ {ge}", "greater_than": "must be > {gt}", "less_than_equal": "must be ≤ {le}",
    "less_than": "must be < {lt}", "bool_type": "must be true or false", "int_type": "must be an integer",
    "int_from_float": "must be an integer", "float_type": "must be a number", "string_type": "must be a string",
    "list_type": "must be a list", "tuple_type": "must be a list", "dict_type": "must be a mapping",
    "model_type": "must be a mapping of keys to values", "model_attributes_type": "must be a mapping of keys to values",
    "literal_error": "must be {expected}", "path_type": "must be a file path", "too_short": "must not be empty",
    "int_parsing": "must be an integer", "float_parsing": "must be a number", "bool_parsing": "must be true or false",
    "string_too_short": "must not be empty", "mapping_type": "must be a mapping", "float_finite_number":
    "must be a finite number", "too_long": "must have at most {max_length} items",
}


def _unwrap(tp: Any) -> Any:
    while True:
        origin = get_origin(tp)
        if origin in (Annotated, Required, NotRequired):
            tp = get_args(tp)[0]
        elif origin in (Union, UnionType) and len([a for a in get_args(tp) if a is not type(None)]) == 1:
            tp = next(a for a in get_args(tp) if a is not type(None))
        else:
            return tp


def _walk(loc: Sequence[Any], root: Any) -> tuple[list[Any], Any]:
    """The key path a user wrote for pydantic's ``loc`` (without the tags of the backend union, which are not
    keys), and the type found at its end (None where the walk gets lost)."""
    tp: Any = root
    where: list[Any] = []
    for part in loc:
        tp = _unwrap(tp)
        origin = get_origin(tp)
        if part == "[key]":  # a mapping key of the wrong type: the path already ends at it
            continue
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            tp = next((f.annotation for n, f in tp.model_fields.items() if (f.alias or n) == part), None)
        elif is_typeddict(tp):
            tp = get_type_hints(tp).get(part)
        elif origin in (dict, Mapping):
            tp = get_args(tp)[1]
        elif origin in (list, tuple, Sequence):
            tp = get_args(tp)[0]
        elif origin in (Union, UnionType):  # the backend union: pydantic puts the tag in loc
            tp = next((m for m in get_args(tp) if _tag_of(_unwrap(m)) == part), None)
            continue
        else:
            tp = None
        where.append(part)
    return where, tp


def _tag_of(model: Any) -> Any:
    if isinstance(model, type) and issubclass(model, BaseModel) and "backend" in model.model_fields:
        args = get_args(model.model_fields["backend"].annotation)
        return args[0] if args else None
    return None


def _keys(tp: Any) -> list[str]:
    tp = _unwrap(tp)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [f.alias or n for n, f in tp.model_fields.items()]
    if is_typeddict(tp):
        return list(get_type_hints(tp))
    return []


def _hint(tp: Any, key: str) -> str:
    tp = _unwrap(tp)
    if not (isinstance(tp, type) and issubclass(tp, BaseModel)):
        return ""
    field = next((f for n, f in tp.model_fields.items() if (f.alias or n) == key), None)
    description = " ".join((field.description or "").split()) if field is not None else ""  # one line
    description = description.split(" (")[0].rstrip(".")
    first = description.split(" ", 1)[0]
    if not (len(first) > 1 and first.isupper()):  # "One file ..." reads on as "one file ...", "KG name ..." stays
        description = description[:1].lower() + description[1:]
    return f": {description}" if description and len(description) <= 100 else ""


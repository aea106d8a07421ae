"""Field types that suites' ``Settings`` models share with the project config: input files that must exist, and
names that must be configured elsewhere in the file.

:func:`kgprobe.config.load_config` validates every section with a context that names the config file's folder
(``base``), the configured models (``models``) and the scoring judges (``judges``). Each check below runs only when
its part of that context is there, so a suite's settings validated on their own (a test, a schema) skip it:

    >>> class MySettings(BaseModel):
    ...     templates: InputFile | None = None     # relative to the config file; must exist when loaded from one
    ...     generator: ModelName | None = None     # a name under models
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Strict, ValidationInfo, model_validator

__all__ = ["Bool", "ConfigPath", "InputFile", "Int", "JudgeName", "KGName", "ModelName", "OutputFolder", "Section",
           "confined", "confined_model_entry", "confined_model_id", "existing_file", "nfc", "resolve_path"]


def _context(info: ValidationInfo) -> dict[str, Any]:
    return info.context if isinstance(info.context, dict) else {}


def existing_file(path: Path) -> Path:
    """``path`` when it is a file; else a ValueError (what pydantic reports at the key) saying what to do."""
    if path.is_file():
        return path
    if path.is_dir():
        raise ValueError(f"{path} is a folder; give a file")
    raise ValueError(f"file {path} not found; fix the path (relative to the config file's folder) or create the file")


def confined(path: Path, info: ValidationInfo) -> Path:
    """``path`` when the config allows it: with ``allow_paths_outside_config: false`` (the validation context's
    ``confine``), only a file inside the config file's folder, after ``..`` and symbolic links are resolved; else a
    ValueError that names the folder and the setting."""
    context = _context(info)
    base = context.get("base")
    if base is None or not context.get("confine"):
        return path
    root, real = Path(base).resolve(), Path(path).resolve()
    if real != root and root not in real.parents:
        raise ValueError(f"{path} is outside the config file's folder {root}, and allow_paths_outside_config is "
                         "false (or KGPROBE_ALLOW_PATHS_OUTSIDE_CONFIG=false): put the file in that folder (symbolic "
                         "links are followed)")
    return path


def confined_model_id(model_id: Any, info: ValidationInfo) -> Any:
    """``model_id`` when the weights it names may be read: a hub id or the built-in SmolLM2 always; a local file or
    folder (``gguf:<file>``, ``/path``, ``./folder``: :func:`kgprobe.generation.backends.hf.local_weights`) only
    inside the config file's folder when the config is confined (:func:`confined`). The path is taken as the backend
    reads it, from the working directory."""
    from kgprobe.generation.backends.hf import local_weights

    path = local_weights(model_id) if isinstance(model_id, str) else None
    if path is not None:
        confined(path, info)
    return model_id


def confined_model_entry(entry: Any, info: ValidationInfo) -> tuple[str, str] | None:
    """The first key of a model entry (a mapping or a validated entry) that names a path a confined config may not
    use, with the reason: ``model_id`` (see :func:`confined_model_id`) or ``cache_dir`` (where converted weights are
    written) of a local backend (transformers, vllm); None when there is none. API and reference entries name no
    local path."""
    get = entry.get if isinstance(entry, dict) else (lambda key, default=None: getattr(entry, key, default))
    if get("backend") not in ("transformers", "vllm"):
        return None
    for key in ("model_id", "cache_dir"):
        value = get(key)
        if not isinstance(value, str) or not value:
            continue
        try:
            confined_model_id(value, info) if key == "model_id" else confined(Path(value).expanduser(), info)
        except ValueError as exc:
            return key, str(exc)
    return None


def _output_folder(value: str | None, info: ValidationInfo) -> str | None:
    base = _context(info).get("base")
    if value is None or base is None:
        return value
    path = Path(value).expanduser()
    confined(path if path.is_absolute() else Path(base) / path, info)
    return value  # kept as written: the suite resolves it against the config's folder when it writes there


def nfc(value: Any) -> Any:
    """``value`` in Unicode normal form C when it is a string: a name typed as a base letter and a combining accent
    (NFD, as macOS file names are) is the same name as its precomposed spelling."""
    import unicodedata

    return unicodedata.normalize("NFC", value) if isinstance(value, str) else value


def _input_file(value: str, info: ValidationInfo) -> str:
    base = _context(info).get("base")
    if base is None:
        return value
    path = Path(value).expanduser()
    path = path if path.is_absolute() else Path(base) / path
    confined(path, info)
    existing_file(path)
    return value  # kept as written: the suite resolves it against the config's folder when it reads it


def _named(key: str, what: str, fix: str):
    def check(value: str, info: ValidationInfo) -> str:
        known = _context(info).get(key)
        if known is not None and value not in known:
            raise ValueError(f"{value!r} is not one of the {what} ({', '.join(map(str, known)) or 'none'}); {fix}")
        return value

    return check


#: A file path, relative to the config file's folder (kept as written); it must exist when the config is loaded.
InputFile = Annotated[str, AfterValidator(_input_file)]
#: A folder kgprobe writes to, relative to the config file's folder (kept as written); confined like an input file.
OutputFolder = Annotated[str | None, AfterValidator(_output_folder)]
#: The name of a model listed under ``models``.
ModelName = Annotated[str, BeforeValidator(nfc), AfterValidator(_named("models", "models listed under models",
                                                 "add it under models or fix the name"))]
#: The name of a model listed under ``scoring.judges``.
JudgeName = Annotated[str, BeforeValidator(nfc), AfterValidator(_named("judges", "scoring judges", "add it under scoring.judges or fix "
                                                 "the name"))]


# Scalars are checked strictly: YAML already types them, so a quoted "yes" or "5" is a mistake, not a bool or int.
Int = Annotated[int, Strict()]
Bool = Annotated[bool, Strict()]


class Section(BaseModel):
    """Base of every config section: unknown keys are errors, settings are read-only, field docstrings become the JSON
    schema's descriptions."""

    # protected_namespaces=(): backends take a `model_id`, which older pydantic releases would warn about
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True, protected_namespaces=())

    @model_validator(mode="before")
    @classmethod
    def _empty_is_default(cls, data: Any) -> Any:
        # `generation:` with every key commented out is null in YAML; it means "all defaults", not a mistake
        return {} if data is None else data


def resolve_path(value: Any, info: ValidationInfo) -> Any:
    """``value`` as a path against the config file's folder (the context's ``base``); other types pass through."""
    if not isinstance(value, (str, os.PathLike)):
        return value  # pydantic reports the wrong type
    path = Path(value).expanduser()
    base = _context(info).get("base")
    return path if path.is_absolute() or base is None else base / path


def _existing(path: Path, info: ValidationInfo) -> Path:
    # only for a config read from a file: a model validated on its own (a test, a schema) names no folder
    return existing_file(confined(path, info)) if _context(info).get("base") is not None else path


def _kg_name(value: str | None, info: ValidationInfo) -> str | None:
    known = _context(info).get("kgs")
    if not known:  # no context, or `kgs` itself is wrong and reported there
        return value
    if value is None:
        return known[0]
    if value not in known:
        raise ValueError(f"{value!r} is not one of the configured KGs ({', '.join(map(str, known))})")
    return value


#: An input file named in the config, resolved against the config file's folder; it must exist.
ConfigPath = Annotated[Path, BeforeValidator(resolve_path, json_schema_input_type=str), AfterValidator(_existing)]
#: A KG of ``kgs`` by name; left out, the first configured KG.
KGName = Annotated[str | None, AfterValidator(_kg_name)]

"""Reading YAML that a person wrote (the project config, ERBench specs, domain and template files) without letting
aliases blow it up: a "billion laughs" document of a few hundred bytes whose anchors are repeated by aliases
(``&a [x, x]``, ``&b [*a, *a]``, ...) is a few nodes to PyYAML but billions once validated or copied.

    >>> load_yaml("a: &x [1, 2]\\nb: *x", what="demo.yaml")
    {'a': [1, 2], 'b': [1, 2]}
"""

from __future__ import annotations

from typing import Any

import yaml

from kgprobe.errors import ConfigError

__all__ = ["MAX_YAML_DEPTH", "MAX_YAML_VALUES", "BoundedLoader", "YAMLTooLarge", "load_yaml"]

#: The most values (scalars, lists and mappings, counted as often as aliases repeat them) one YAML document may hold.
MAX_YAML_VALUES = 100_000
#: The deepest nesting of lists and mappings one YAML document may have (a config needs about ten levels; Python's
#: recursive parsers fail somewhere past a few hundred).
MAX_YAML_DEPTH = 100


class YAMLTooLarge(yaml.YAMLError):
    """A document whose aliases expand past :data:`MAX_YAML_VALUES` values, refer to themselves, or nest deeper
    than :data:`MAX_YAML_DEPTH` levels."""


def _where(node: yaml.Node) -> str:
    return f"line {node.start_mark.line + 1}, column {node.start_mark.column + 1}"


def _expanded_size(root: yaml.Node, limit: int, max_depth: int = MAX_YAML_DEPTH) -> int:
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node, depth: int = 1) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_nodes:
            raise YAMLTooLarge(f"an alias near {_where(node)} refers to a list or mapping that contains it; "
                               "such a value never ends")
        if depth > max_depth:
            raise YAMLTooLarge(f"lists and mappings nest more than {max_depth} levels deep (near {_where(node)}); "
                               "no kgprobe file needs that many")
        open_nodes.add(key)
        if isinstance(node, yaml.SequenceNode):
            n = 1 + sum(size(child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            n = 1 + sum(size(k, depth + 1) + size(v, depth + 1) for k, v in node.value)
        else:
            n = 1
        open_nodes.discard(key)
        if n > limit:
            raise YAMLTooLarge(f"the document expands to more than {limit:,} values (near {_where(node)}): "
                               "aliases (*name) repeat what their anchor (&name) holds, and these repeat each other. "
                               "Write the values out, or use fewer nested aliases")
        sizes[key] = n
        return n

    return size(root)


class BoundedLoader(yaml.SafeLoader):
    """A SafeLoader that refuses a document whose aliases expand past :data:`MAX_YAML_VALUES` values, before it is
    built (building is where the memory would go)."""

    max_values = MAX_YAML_VALUES

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        _expanded_size(node, self.max_values)
        return self.construct_document(node)


def load_yaml(text: str, *, what: str, loader: type[BoundedLoader] = BoundedLoader) -> Any:
    """The YAML ``text`` as Python data, read with ``loader`` (a :class:`BoundedLoader`); a
    :class:`~kgprobe.errors.ConfigError` naming ``what`` (the file) when it is not valid YAML, its aliases expand
    too far, or it nests deeper than :data:`MAX_YAML_DEPTH` levels."""
    try:
        return yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader subclass
    except YAMLTooLarge as exc:
        raise ConfigError(f"{what}: refused: {exc}") from None
    except RecursionError:
        # PyYAML composes nested nodes recursively: a document nested hundreds of levels deep stops it before
        # the depth check can run
        raise ConfigError(f"{what}: refused: lists and mappings nest too deeply to read (more than "
                          f"{MAX_YAML_DEPTH} levels); no kgprobe file needs that many") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{what}: not valid YAML ({exc}); fix the file at that line") from exc

"""LiteLLM, imported quietly and with its bundled price map: the API backend and the cost estimate both use it, so
it lives below both. Importing this module is cheap; litellm itself is imported on the first call."""

from __future__ import annotations

import os
from typing import Any

__all__ = ["import_litellm"]


def import_litellm() -> Any:
    """The ``litellm`` module, set to read its local price map (no download at run time) and to log errors only."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_LOG", "ERROR")
    import litellm

    litellm.suppress_debug_info = True
    return litellm

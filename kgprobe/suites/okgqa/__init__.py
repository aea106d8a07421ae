"""OKGQA / OKGQA-P (Sui et al.): open-ended questions answered zero-shot and with KG facts retrieved as triplets,
paths or a PCST subgraph from the question's clean or perturbed subgraph; each answer's atomic facts checked
against the KG itself, and rated with G-Eval.

    >>> from kgprobe.suites.okgqa import OKGQASuite
    >>> OKGQASuite().headline.metric
    'factscore'
"""

from __future__ import annotations

from kgprobe.suites.okgqa.suite import OKGQASettings, OKGQASuite

__all__ = ["OKGQASettings", "OKGQASuite"]

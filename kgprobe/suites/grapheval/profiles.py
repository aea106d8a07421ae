"""GraphEval's two protocols, ``profile: paper | kgprobe``: what a statement set is drawn from, how it is asked and
how its answers are read. The paper's is the default and gives the headline; kgprobe's is a stricter variant of
ours. Each writes its own task, so the report can say which produced each number.

=====================  ==============================================  ============================================
                       ``paper`` (task ``statement``)                  ``kgprobe`` (task ``statement_kgprobe``)
=====================  ==============================================  ============================================
positives              every triple, or a uniform sample (positives)   at most ``per_relation`` per relation
negatives              1 per positive, uniform corruption              3 per positive, typed corruption
prompt                 the released prompt, byte for byte, as raw      Table 6 (``### Response:``) in the chat
                       text (no chat template, so no default system    template
                       prompt)
unreadable answer      read as IDK (so is a tied vote)                 the full penalty (F = 0, F' = 1)
duplicate positives    kept, as the paper keeps every triple           a text shared by two positives asked once
=====================  ==============================================  ============================================

Explicit ``negatives`` and ``corruption`` settings override both profiles' defaults.

    >>> PROFILES["paper"].unknown_as, PROFILES["kgprobe"].task
    ('idk', 'statement_kgprobe')
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PROFILES", "Profile", "profile_of_task"]


@dataclass(frozen=True)
class Profile:
    """One protocol: its name, the task its items and metric rows carry, its defaults and its reading."""

    name: str
    task: str
    label: str
    negatives: int
    corruption: str
    per_relation_cap: bool
    unknown_as: str
    raw_prompt: bool
    dedup: bool


PROFILES: dict[str, Profile] = {
    "paper": Profile("paper", "statement", "paper profile", negatives=1, corruption="uniform", per_relation_cap=False,
                     unknown_as="idk", raw_prompt=True, dedup=False),
    "kgprobe": Profile("kgprobe", "statement_kgprobe", "kgprobe profile (stricter, ours)", negatives=3,
                       corruption="typed", per_relation_cap=True, unknown_as="penalty", raw_prompt=False,
                       dedup=True),
}
_BY_TASK = {p.task: p for p in PROFILES.values()}


def profile_of_task(task: str | None) -> Profile:
    """The profile whose items carry ``task`` (an unknown task reads as the paper's: its ``statement``)."""
    return _BY_TASK.get(str(task or "statement"), PROFILES["paper"])

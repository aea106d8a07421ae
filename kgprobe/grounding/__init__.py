"""What a grounded prompt puts before the question: KG perturbations (OKGQA-P: RS, RR, ER, ED), the triple scorer
s_G that RR and ATS need, and the similarity of a perturbed KG to its original (ATS, SC2D, SD2).

    >>> from kgprobe.grounding import perturb
    >>> perturb(triples, "ED", 0.3, seed=0)
"""

from __future__ import annotations

from kgprobe.grounding.perturb import perturb

__all__ = ["perturb"]

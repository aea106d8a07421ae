"""The claim checker's KG index built from arrays (integer ids, a KG read from DuckDB) against the same index built
by a dict operation per triple (the path keys take): the same dicts, keys in the same order, each set's values added
in the same order, and the same single-valued relations and relation file."""

from __future__ import annotations

import numpy as np

from kgprobe.scoring.claims import KGFacts, _functional


def _random_kg(seed: int) -> KGFacts:
    rng = np.random.default_rng(seed)
    n = 3000
    heads = rng.zipf(1.6, n) % 400
    rels = rng.zipf(1.4, n) % 30
    tails = rng.zipf(1.3, n) % 500 + 100  # 500..599 are years, some of them tails only
    trip = frozenset(zip(heads.tolist(), rels.tolist(), tails.tolist()))
    ents = {e: (str(1500 + e) if e >= 500 else f"Entity {e}") for t in trip for e in (t[0], t[2])}
    words = ["place of birth", "located in", "contains", "father", "date of birth", "member of", "country", "spouse"]
    relations = {r: words[r % len(words)] + ("" if r < len(words) else f" {r}") for r in range(30)}
    return KGFacts(entities=ents, relations=relations, triples=trip,
                   relation_keys={r: f"P{r}" for r in relations}, functional=frozenset({1, 3}))


def _python_path(kg: KGFacts) -> KGFacts:
    twin = KGFacts(entities=kg.entities, relations=kg.relations, triples=kg.triples, functional=kg.functional,
                   relation_keys=kg.relation_keys)
    twin.__dict__["_columns"] = None  # as for keys: every index by a dict operation per triple
    return twin


def _ordered(d: dict) -> list:
    return [(k, list(v) if isinstance(v, (set, frozenset)) else v) for k, v in d.items()]


def test_array_index_equals_the_dict_index() -> None:
    for seed in (0, 1, 2):
        kg = _random_kg(seed)
        ref = _python_path(kg)
        assert kg._columns is not None and kg._columns.shape == (len(kg.triples), 3)
        assert _ordered(kg._by_head) == _ordered(ref._by_head)
        for got, want in zip(kg._roles[:4], ref._roles[:4]):
            assert _ordered(got) == _ordered(want)
        assert list(kg._roles[4]) == list(ref._roles[4]) and kg._roles[4] == ref._roles[4]
        assert any(len(parts[1]) > 1 for parts in kg._roles[4].values())
        assert kg._subject_counts == ref._subject_counts
        assert kg._literals == ref._literals and kg._literals  # the years that are never heads
        assert kg._places == ref._places and kg._places[0]
        assert kg.profiles == ref.profiles
        assert kg.relation_file() == ref.relation_file()


def test_single_valued_counts_on_arrays_equal_the_dict_counts() -> None:
    found = set()
    for seed in (0, 1, 2):
        kg = _random_kg(seed)
        values = set(kg._literals)
        as_keys = frozenset((f"e{h}", f"r{r}", f"e{t}") for h, r, t in kg.triples)
        labels = {r: lab for r, lab in kg.relations.items()}
        for share, least in ((0.9, 5), (0.6, 3), (1.0, 2)):
            got = _functional(kg.triples, share, least, labels, kg.relation_keys, values=values)
            want = _functional(as_keys, share, least, {f"r{r}": lab for r, lab in labels.items()},
                               {f"r{r}": k for r, k in kg.relation_keys.items()}, values={f"e{v}" for v in values})
            assert {f"r{r}" for r in got} == set(want)
            found |= {len(got)}
    assert max(found) > 0 and min(found) < 30  # some relations single-valued, not all: the comparison says something


def test_relation_file_reads_tails_without_building_every_role_index() -> None:
    # the profiles (value kind of each relation from its tails that are years) from one sort of (relation, tail)
    # keys: the same profiles and file as the dict path, and the role indexes are never built for them
    kinds = set()
    for seed in (0, 1, 2):
        base = _random_kg(seed)
        years = frozenset((h, 4, 500 + (7 * h) % 100) for h in range(0, 300, 3))  # "date of birth": years
        ents = {**base.entities, **{t: str(1500 + t) for _, _, t in years}, **{h: f"Entity {h}" for h, _, _ in years}}
        make = lambda: KGFacts(entities=ents, relations=base.relations, triples=base.triples | years,  # noqa: E731
                               relation_keys=base.relation_keys, functional=base.functional)
        kg, ref = make(), _python_path(make())
        text = kg.relation_file()
        assert "_roles" not in kg.__dict__ and "_tail_kinds" in kg.__dict__
        assert kg.profiles == ref.profiles and text == ref.relation_file()
        kinds |= {p.value for p in kg.profiles.values()}
    assert kinds > {"entity"}  # some relation's tails are mostly years: the literal path is exercised

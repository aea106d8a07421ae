-- R-Neg, nm_new(S, O') :- !nm(S, O'): for a fact nm(S, O), another object O' of nm drawn by a seeded hash such that
-- nm(S, O') (and, for a symmetric nm, nm(O', S)) is absent from the KG; its proof is nm(S, O). An O' that holds one of
-- S's objects of nm through the containment relations ($inward: head inside tail, "located in", "country";
-- $outward: head holds tail, "contains"), within $hops triples, is never drawn: "X was not born in Spain" is false
-- when the KG has X born in Málaga, in Spain. With $named_only, S, O and O' are entities with a readable name (the
-- checks read the whole KG). Capped per subject and per relation in the seeded order.
-- Every relation of $relations (keys; those of $symmetric are symmetric) in one pass over the KG, each drawn, checked
-- and capped on its own (the first column names it): one query per relation read the entities, the containment steps
-- and their closure once per relation, hundreds of times on a KG with hundreds of functional relations.
WITH RECURSIVE rel AS (SELECT id, list_contains($symmetric::VARCHAR[], key) AS symmetric FROM relations
                       WHERE list_contains($relations::VARCHAR[], key)),
named AS (  -- the entities a question may show: all, or with $named_only those with a readable name
    SELECT id FROM entities WHERE NOT $named_only OR NOT regexp_full_match(trim(label), $id_pattern)
),
facts AS (SELECT head, relation, tail FROM triples WHERE relation IN (SELECT id FROM rel)),
objects AS (
    SELECT relation, tail, row_number() OVER (PARTITION BY relation ORDER BY hash(tail, $seed), tail) - 1 AS k
    FROM (SELECT DISTINCT relation, tail FROM facts WHERE tail IN (SELECT id FROM named))
),
counts AS (SELECT relation, count(*) AS n FROM objects GROUP BY relation),
drawn AS (
    SELECT f.head, f.relation, f.tail, (hash(f.head, f.tail, $seed) % c.n)::BIGINT AS k
    FROM facts f JOIN counts c ON c.relation = f.relation
    WHERE f.head IN (SELECT id FROM named) AND f.tail IN (SELECT id FROM named)
),
picked AS (
    SELECT d.head AS subject, o.tail AS object, d.relation, d.tail AS premise_tail
    FROM drawn d JOIN objects o ON o.relation = d.relation AND o.k = d.k
    WHERE o.tail <> d.tail AND o.tail <> d.head
    QUALIFY row_number() OVER (PARTITION BY d.relation, d.head, o.tail ORDER BY d.tail) = 1
),
step AS (  -- one containment step out: inner -> the place that holds it
    SELECT head AS inner, tail AS outer FROM triples WHERE list_contains($inward::BIGINT[], relation)
    UNION
    SELECT tail AS inner, head AS outer FROM triples WHERE list_contains($outward::BIGINT[], relation)
),
held(start, place, depth) AS (  -- from the objects of every relation's picked subjects (a start is a start for all)
    SELECT DISTINCT x.tail, s.outer, 1
    FROM (SELECT DISTINCT relation, subject FROM picked) p JOIN facts x ON x.relation = p.relation AND x.head = p.subject
    JOIN step s ON s.inner = x.tail
    UNION
    SELECT h.start, s.outer, h.depth + 1 FROM held h JOIN step s ON s.inner = h.place WHERE h.depth < $hops
),
kept AS (
    SELECT p.relation, subject, object, [{'head': subject, 'relation': p.relation, 'tail': premise_tail}] AS premises
    FROM picked p JOIN rel ON rel.id = p.relation
    WHERE NOT EXISTS (SELECT 1 FROM facts x WHERE x.relation = p.relation AND x.head = p.subject AND x.tail = p.object)
      AND NOT (rel.symmetric AND EXISTS (SELECT 1 FROM facts x WHERE x.relation = p.relation AND x.head = p.object
                                                                AND x.tail = p.subject))
      AND NOT EXISTS (SELECT 1 FROM facts x JOIN held h ON h.start = x.tail
                      WHERE x.relation = p.relation AND x.head = p.subject AND h.place = p.object)
    QUALIFY row_number() OVER (PARTITION BY p.relation, subject ORDER BY hash(subject, object, $seed)) <= $per_subject
)
SELECT relation, subject, object, premises, false AS in_kg FROM kept
QUALIFY row_number() OVER (PARTITION BY relation ORDER BY hash(subject, object, $seed + 1), subject, object) <= $per_rule
ORDER BY relation, hash(subject, object, $seed + 1), subject, object

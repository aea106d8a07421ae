-- R-Neg, nm_new(S, O') :- !nm(S, O'): for a fact nm(S, O), another object O' of nm drawn by a seeded hash such that
-- nm(S, O') (and, for a symmetric nm, nm(O', S)) is absent from the KG; its proof is nm(S, O). An O' that holds one of
-- S's objects of nm through the containment relations ($inward: head inside tail, "located in", "country";
-- $outward: head holds tail, "contains"), within $hops triples, is never drawn: "X was not born in Spain" is false
-- when the KG has X born in Málaga, in Spain. With $named_only, S, O and O' are entities with a readable name (the
-- checks read the whole KG). Capped per subject and per relation in the seeded order.
WITH RECURSIVE rel AS (SELECT id FROM relations WHERE key = $relation),
named AS (  -- the entities a question may show: all, or with $named_only those with a readable name
    SELECT id FROM entities WHERE NOT $named_only OR NOT regexp_full_match(trim(label), $id_pattern)
),
facts AS (SELECT head, relation, tail FROM triples WHERE relation = (SELECT id FROM rel)),
objects AS (
    SELECT tail, row_number() OVER (ORDER BY hash(tail, $seed), tail) - 1 AS k
    FROM (SELECT DISTINCT tail FROM facts WHERE tail IN (SELECT id FROM named))
),
drawn AS (
    SELECT head, relation, tail, (hash(head, tail, $seed) % (SELECT count(*) FROM objects))::BIGINT AS k FROM facts
    WHERE head IN (SELECT id FROM named) AND tail IN (SELECT id FROM named)
),
picked AS (
    SELECT d.head AS subject, o.tail AS object, d.relation, d.tail AS premise_tail
    FROM drawn d JOIN objects o ON o.k = d.k
    WHERE o.tail <> d.tail AND o.tail <> d.head
    QUALIFY row_number() OVER (PARTITION BY d.head, o.tail ORDER BY d.tail) = 1
),
step AS (  -- one containment step out: inner -> the place that holds it
    SELECT head AS inner, tail AS outer FROM triples WHERE list_contains($inward::BIGINT[], relation)
    UNION
    SELECT tail AS inner, head AS outer FROM triples WHERE list_contains($outward::BIGINT[], relation)
),
held(start, place, depth) AS (
    SELECT DISTINCT x.tail, s.outer, 1
    FROM (SELECT DISTINCT subject FROM picked) p JOIN facts x ON x.head = p.subject JOIN step s ON s.inner = x.tail
    UNION
    SELECT h.start, s.outer, h.depth + 1 FROM held h JOIN step s ON s.inner = h.place WHERE h.depth < $hops
)
SELECT subject, object, [{'head': subject, 'relation': relation, 'tail': premise_tail}] AS premises, false AS in_kg
FROM picked p
WHERE NOT EXISTS (SELECT 1 FROM facts x WHERE x.head = p.subject AND x.tail = p.object)
  AND NOT ($symmetric AND EXISTS (SELECT 1 FROM facts x WHERE x.head = p.object AND x.tail = p.subject))
  AND NOT EXISTS (SELECT 1 FROM facts x JOIN held h ON h.start = x.tail WHERE x.head = p.subject AND h.place = p.object)
QUALIFY row_number() OVER (PARTITION BY subject ORDER BY hash(subject, object, $seed)) <= $per_subject
ORDER BY hash(subject, object, $seed + 1), subject, object
LIMIT $per_rule

-- R-Neg, nm_new(S, O') :- !nm(S, O'): for a fact nm(S, O), another object O' of nm drawn by a seeded hash such that
-- nm(S, O') (and, for a symmetric nm, nm(O', S)) is absent from the KG; its proof is nm(S, O). Capped per subject and
-- per relation in the seeded order.
WITH rel AS (SELECT id FROM relations WHERE key = $relation),
facts AS (SELECT head, relation, tail FROM triples WHERE relation = (SELECT id FROM rel)),
objects AS (
    SELECT tail, row_number() OVER (ORDER BY hash(tail, $seed), tail) - 1 AS k FROM (SELECT DISTINCT tail FROM facts)
),
drawn AS (
    SELECT head, relation, tail, (hash(head, tail, $seed) % (SELECT count(*) FROM objects))::BIGINT AS k FROM facts
),
picked AS (
    SELECT d.head AS subject, o.tail AS object, d.relation, d.tail AS premise_tail
    FROM drawn d JOIN objects o ON o.k = d.k
    WHERE o.tail <> d.tail AND o.tail <> d.head
    QUALIFY row_number() OVER (PARTITION BY d.head, o.tail ORDER BY d.tail) = 1
)
SELECT subject, object, [{'head': subject, 'relation': relation, 'tail': premise_tail}] AS premises, false AS in_kg
FROM picked p
WHERE NOT EXISTS (SELECT 1 FROM facts x WHERE x.head = p.subject AND x.tail = p.object)
  AND NOT ($symmetric AND EXISTS (SELECT 1 FROM facts x WHERE x.head = p.object AND x.tail = p.subject))
QUALIFY row_number() OVER (PARTITION BY subject ORDER BY hash(subject, object, $seed)) <= $per_subject
ORDER BY hash(subject, object, $seed + 1), subject, object
LIMIT $per_rule

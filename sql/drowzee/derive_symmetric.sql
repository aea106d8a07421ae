-- R-Sym, nm(S, O) :- nm(O, S): every fact nm(O, S) of a symmetric relation gives nm(S, O); in_kg says whether the KG
-- already states it. Capped as derive_negation.
WITH rel AS (SELECT id FROM relations WHERE key = $relation)
SELECT t.tail AS subject, t.head AS object, [{'head': t.head, 'relation': t.relation, 'tail': t.tail}] AS premises,
       EXISTS (SELECT 1 FROM triples x WHERE x.head = t.tail AND x.relation = t.relation AND x.tail = t.head) AS in_kg
FROM triples t
WHERE t.relation = (SELECT id FROM rel) AND t.head <> t.tail
QUALIFY row_number() OVER (PARTITION BY t.tail ORDER BY hash(t.tail, t.head, $seed)) <= $per_subject
ORDER BY hash(t.tail, t.head, $seed + 1), t.tail, t.head
LIMIT $per_rule

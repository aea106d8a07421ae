-- same_P(A, B) :- P(A, C), P(B, C), A <> B (the released code's composite rule, "share the same director"): one
-- shared object per pair, over objects with at most $max_fanin subjects (a shared gender says little). Capped as
-- derive_negation.
WITH rel AS (SELECT id FROM relations WHERE key = $relation),
named AS (  -- the entities a question may show: all, or with $named_only those with a readable name
    SELECT id FROM entities WHERE NOT $named_only OR NOT regexp_full_match(trim(label), $id_pattern)
),
fan AS (SELECT tail FROM triples WHERE relation = (SELECT id FROM rel) GROUP BY tail HAVING count(*) <= $max_fanin),
pairs AS (
    SELECT a.head AS subject, b.head AS object, a.tail AS shared
    FROM triples a JOIN triples b ON b.tail = a.tail AND b.relation = a.relation AND a.head < b.head
    WHERE a.relation = (SELECT id FROM rel) AND a.tail IN (SELECT tail FROM fan)
      AND a.head IN (SELECT id FROM named) AND b.head IN (SELECT id FROM named) AND a.tail IN (SELECT id FROM named)
    QUALIFY row_number() OVER (PARTITION BY a.head, b.head ORDER BY hash(a.tail, $seed)) = 1
)
SELECT subject, object,
       [{'head': subject, 'relation': (SELECT id FROM rel), 'tail': shared},
        {'head': object, 'relation': (SELECT id FROM rel), 'tail': shared}] AS premises,
       false AS in_kg
FROM pairs
QUALIFY row_number() OVER (PARTITION BY subject ORDER BY hash(subject, object, $seed)) <= $per_subject
ORDER BY hash(subject, object, $seed + 1), subject, object
LIMIT $per_rule

-- R-Sym, nm(S, O) :- nm(O, S): every fact nm(O, S) of a symmetric relation gives nm(S, O); in_kg says whether the KG
-- already states it. With $derived_only, facts the KG already states are not asked; candidates and stored count
-- every derivation before that filter and the caps (the share already stored is reported). Capped as
-- derive_negation; the totals come as one last row without a fact.
WITH rel AS (SELECT id FROM relations WHERE key = $relation),
named AS (  -- the entities a question may show: all, or with $named_only those with a readable name
    SELECT id FROM entities WHERE NOT $named_only OR NOT regexp_full_match(trim(label), $id_pattern)
),
cand AS (
    SELECT t.tail AS subject, t.head AS object, [{'head': t.head, 'relation': t.relation, 'tail': t.tail}] AS premises,
           EXISTS (SELECT 1 FROM triples x WHERE x.head = t.tail AND x.relation = t.relation AND x.tail = t.head) AS in_kg
    FROM triples t
    WHERE t.relation = (SELECT id FROM rel) AND t.head <> t.tail
),
totals AS (SELECT count(*) AS candidates, count(*) FILTER (WHERE in_kg) AS stored FROM cand),
picked AS (
    SELECT subject, object, premises, in_kg
    FROM cand
    WHERE NOT ($derived_only AND in_kg) AND subject IN (SELECT id FROM named) AND object IN (SELECT id FROM named)
    QUALIFY row_number() OVER (PARTITION BY subject ORDER BY hash(subject, object, $seed)) <= $per_subject
    ORDER BY hash(subject, object, $seed + 1), subject, object
    LIMIT $per_rule
)
SELECT subject, object, premises, in_kg, NULL::BIGINT AS candidates, NULL::BIGINT AS stored FROM picked
UNION ALL
SELECT NULL, NULL, NULL, NULL, candidates, stored FROM totals

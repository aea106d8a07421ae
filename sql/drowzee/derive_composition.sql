-- R-Trans and composition, target(S, O') :- first(S, O), second(O, O'): one proof per derived pair (the path that
-- hashes first); transitivity is first = second = target. in_kg says whether target(S, O') is already a KG fact;
-- with $derived_only such facts are not asked, and candidates and stored count every derived pair before that
-- filter and the caps (one last row, without a fact). Capped as derive_negation. $every > 1 keeps the paths of the
-- subjects whose seeded hash is a multiple of it (a seeded sample of about 1 / $every of the subjects, with all their
-- paths), when the relations' two-step paths exceed the budget (rules.py, _PATH_BUDGET); $every = 1 keeps them all.
WITH f AS (SELECT id FROM relations WHERE key = $first),
s AS (SELECT id FROM relations WHERE key = $second),
named AS (  -- the entities a question may show: all, or with $named_only those with a readable name
    SELECT id FROM entities WHERE NOT $named_only OR NOT regexp_full_match(trim(label), $id_pattern)
),
paths AS (
    SELECT x.head AS subject, y.tail AS object, x.tail AS middle, x.relation AS r1, y.relation AS r2
    FROM triples x JOIN triples y ON y.head = x.tail
    WHERE x.relation = (SELECT id FROM f) AND y.relation = (SELECT id FROM s)
      AND x.head <> y.tail AND x.head <> x.tail AND y.head <> y.tail AND hash(x.head, $seed) % $every = 0
      AND (NOT $named_only OR (x.head IN (SELECT id FROM named) AND x.tail IN (SELECT id FROM named)
                               AND y.tail IN (SELECT id FROM named)))
    QUALIFY row_number() OVER (PARTITION BY x.head, y.tail ORDER BY hash(x.tail, $seed)) = 1
),
cand AS (
    SELECT subject, object,
           [{'head': subject, 'relation': r1, 'tail': middle}, {'head': middle, 'relation': r2, 'tail': object}] AS premises,
           EXISTS (SELECT 1 FROM triples z JOIN relations k ON k.id = z.relation
                   WHERE k.key = $target AND z.head = p.subject AND z.tail = p.object) AS in_kg
    FROM paths p
),
totals AS (SELECT count(*) AS candidates, count(*) FILTER (WHERE in_kg) AS stored FROM cand),
picked AS (
    SELECT subject, object, premises, in_kg
    FROM cand
    WHERE NOT ($derived_only AND in_kg)
    QUALIFY row_number() OVER (PARTITION BY subject ORDER BY hash(subject, object, $seed)) <= $per_subject
    ORDER BY hash(subject, object, $seed + 1), subject, object
    LIMIT $per_rule
)
SELECT subject, object, premises, in_kg, NULL::BIGINT AS candidates, NULL::BIGINT AS stored FROM picked
UNION ALL
SELECT NULL, NULL, NULL, NULL, candidates, stored FROM totals

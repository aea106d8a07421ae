-- GraphEval: every entity's label, the label normalised for comparison (case and spacing) and
-- its primary type (its rarest type), in id order: what the draw of negatives reads; entities.sql adds keys and degrees.
WITH type_size AS (
    SELECT type, count(DISTINCT entity) AS n FROM entity_types GROUP BY type
), primary_type AS (
    SELECT et.entity, arg_min(et.type, (s.n, et.type)) AS type
    FROM entity_types et JOIN type_size s ON s.type = et.type
    GROUP BY et.entity
)
SELECT e.id, e.label, lower(trim(regexp_replace(e.label, '\s+', ' ', 'g'))) AS norm, p.type
FROM entities e LEFT JOIN primary_type p ON p.entity = e.id
ORDER BY e.id

-- GraphEval: every entity with its label, the label normalised for comparison (case and spacing), its primary
-- type (its rarest type: the most specific one, e.g. "painter" before "person" before "Thing") and its degree.
CREATE OR REPLACE TEMP TABLE _ge_ent AS
WITH type_size AS (
    SELECT type, count(DISTINCT entity) AS n FROM entity_types GROUP BY type
), primary_type AS (
    SELECT et.entity, arg_min(et.type, (s.n, et.type)) AS type
    FROM entity_types et JOIN type_size s ON s.type = et.type
    GROUP BY et.entity
), degree AS (
    SELECT x AS entity, count(*) AS deg FROM (SELECT head AS x FROM triples UNION ALL SELECT tail FROM triples) GROUP BY x
)
SELECT e.id, e.key, e.label, lower(trim(regexp_replace(e.label, '\s+', ' ', 'g'))) AS norm, p.type,
       coalesce(d.deg, 0) AS deg
FROM entities e LEFT JOIN primary_type p ON p.entity = e.id LEFT JOIN degree d ON d.entity = e.id

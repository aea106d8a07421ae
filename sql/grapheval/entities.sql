-- GraphEval: every entity of entity_arrays.sql (label, normalised label, primary type: its rarest type, the most
-- specific one, e.g. "painter" before "person" before "Thing"), with its key and its degree, for the items, the
-- rejects and verify_negatives. The CTE "arrays" is that file's query, put in by statements.py.
CREATE OR REPLACE TEMP TABLE _ge_ent AS
WITH arrays AS (
{entity_arrays}
), degree AS (
    SELECT x AS entity, count(*) AS deg FROM (SELECT head AS x FROM triples UNION ALL SELECT tail FROM triples) GROUP BY x
)
SELECT a.id, e.key, a.label, a.norm, a.type, coalesce(d.deg, 0) AS deg
FROM arrays a JOIN entities e ON e.id = a.id LEFT JOIN degree d ON d.entity = a.id

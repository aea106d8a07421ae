-- The label candidates of _rdf_ranked that are not loaded: a label holding a carriage
-- return or line feed (kept = NULL), and any other label of a subject in the rank and language of the one kept
-- (the first of its best-ranked clean labels by rank and text; kept = that label).
CREATE OR REPLACE TEMP TABLE _rdf_label_rejects AS
WITH clean AS (
    SELECT s, lit, lang, rank, row_number() OVER (PARTITION BY s ORDER BY rank, lit) AS n
    FROM _rdf_ranked WHERE rank IS NOT NULL AND NOT regexp_matches(lit, '[\r\n]')
)
SELECT s, lit, lang, NULL::VARCHAR AS kept
FROM _rdf_ranked WHERE rank IS NOT NULL AND regexp_matches(lit, '[\r\n]')
UNION ALL
SELECT c.s, c.lit, c.lang, k.lit
FROM clean c JOIN clean k ON k.s = c.s AND k.n = 1 AND c.n > 1 AND c.rank = k.rank
    AND c.lang IS NOT DISTINCT FROM k.lang AND c.lit <> k.lit

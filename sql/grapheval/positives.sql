-- GraphEval: the positive statements. Per relation, triples in a seeded order (an MD5 of seed and triple), the
-- first $cap of each relation (every triple when $cap is NULL); rendered with the relation's template; with the
-- pools their negatives are drawn from (typed: the entity's primary type, or the relation's heads / tails when the
-- entity has none; uniform: every entity or relation) and text_rank (> 1: the text of another positive).
CREATE OR REPLACE TEMP TABLE _ge_pos_all AS
WITH ranked AS (
    SELECT head, relation, tail,
           row_number() OVER (PARTITION BY relation
                              ORDER BY md5_number_upper(concat_ws(':', $seed, head, relation, tail)), head, tail) AS k
    FROM triples
), chosen AS (
    SELECT head, relation, tail FROM ranked WHERE $cap IS NULL OR k <= $cap
), rendered AS (
    SELECT c.head, c.relation, c.tail, h.key AS hkey, h.label AS hlabel, h.type AS htype, h.deg AS hdeg,
           t.key AS tkey, t.label AS tlabel, t.type AS ttype, t.deg AS tdeg, r.key AS rkey, r.label AS rlabel,
           tp.template, tp.source,
           tp.pre || CASE WHEN tp.head_first THEN h.label ELSE t.label END || tp.mid
                  || CASE WHEN tp.head_first THEN t.label ELSE h.label END || tp.post AS text
    FROM chosen c
    JOIN _ge_ent h ON h.id = c.head JOIN _ge_ent t ON t.id = c.tail
    JOIN relations r ON r.id = c.relation JOIN _ge_templates tp ON tp.relation = c.relation
)
SELECT *,
       CASE WHEN NOT $typed THEN 'e' WHEN htype IS NOT NULL THEN 'type:' || htype ELSE 'dom:' || relation END AS head_pool,
       CASE WHEN NOT $typed THEN 'e' WHEN ttype IS NOT NULL THEN 'type:' || ttype ELSE 'rng:' || relation END AS tail_pool,
       CASE WHEN $typed AND htype IS NOT NULL THEN 'rt:' || htype ELSE 'r' END AS rel_pool,
       row_number() OVER (PARTITION BY text ORDER BY relation, head, tail) AS text_rank
FROM rendered

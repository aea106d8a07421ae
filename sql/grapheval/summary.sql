-- GraphEval: counts of the statement set: positives drawn, kept, with k negatives, with fewer, with none.
WITH counts AS (SELECT ph, pr, pt, count(*) AS c FROM _ge_neg GROUP BY ALL)
SELECT (SELECT count(*) FROM _ge_pos_all) AS positives_drawn,
       (SELECT count(*) FROM _ge_pos) AS positives_unique,
       count(*) FILTER (WHERE c.c = $k) AS positives_full,
       count(*) FILTER (WHERE c.c > 0 AND c.c < $k) AS positives_partial,
       count(*) FILTER (WHERE c.c IS NULL) AS positives_without_negatives,
       coalesce(sum(c.c), 0) AS negatives
FROM _ge_pos p LEFT JOIN counts c ON c.ph = p.head AND c.pr = p.relation AND c.pt = p.tail

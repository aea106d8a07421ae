-- Per relation: the share of its subjects with exactly one object (where a closed-world negation is safe).
WITH per_head AS (SELECT relation, head, count(*) AS n FROM triples GROUP BY relation, head)
SELECT r.key, count(*) AS heads, count(*) FILTER (WHERE n = 1) AS single, count(*) FILTER (WHERE n = 1) / count(*) AS share
FROM per_head p JOIN relations r ON r.id = p.relation
GROUP BY r.key
HAVING count(*) >= $min_support
ORDER BY share DESC, r.key

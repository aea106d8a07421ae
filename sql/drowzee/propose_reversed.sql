-- The evidence of symmetric and of inverse relations from one join of the KG with itself reversed: per ordered
-- pair of relations (r1, r2), how many r1 edges a -> b have an r2 edge b -> a (r1 = r2: symmetric; a loop a -> a
-- reverses itself), with each relation's edges and loops. Every relation has its (r, r) row, 0 when none; a pair of
-- two relations once (the smaller key first), with at least $min_support matches.
WITH totals AS (
    SELECT relation, count(*) AS edges, count(*) FILTER (WHERE head = tail) AS loops FROM triples GROUP BY relation
),
rev AS (
    SELECT a.relation AS r1, b.relation AS r2, count(*) AS n
    FROM triples a JOIN triples b ON b.head = a.tail AND b.tail = a.head
    GROUP BY a.relation, b.relation
),
pairs AS (
    SELECT r1, r2, n FROM rev
    UNION ALL
    SELECT relation, relation, 0 FROM totals WHERE relation NOT IN (SELECT r1 FROM rev WHERE r1 = r2)
)
SELECT k1.key AS relation, k2.key AS other, p.n AS matched, t1.edges, t1.loops, t2.edges AS other_edges
FROM pairs p
JOIN totals t1 ON t1.relation = p.r1
JOIN totals t2 ON t2.relation = p.r2
JOIN relations k1 ON k1.id = p.r1
JOIN relations k2 ON k2.id = p.r2
WHERE p.r1 = p.r2 OR (k1.key < k2.key AND p.n >= $min_support)  -- (r1, r2) and (r2, r1) count the same pairs

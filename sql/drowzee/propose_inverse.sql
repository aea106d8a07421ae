-- Pairs of distinct relations that reverse each other: the share of each one's edges found reversed in the other.
WITH pairs AS (
    SELECT a.relation AS r1, b.relation AS r2, count(*) AS n
    FROM triples a JOIN triples b ON b.head = a.tail AND b.tail = a.head AND b.relation <> a.relation
    GROUP BY a.relation, b.relation
), totals AS (SELECT relation, count(*) AS n FROM triples GROUP BY relation)
SELECT k1.key AS relation, k2.key AS inverse, p.n AS matched, t1.n AS edges, t2.n AS inverse_edges,
       p.n / t1.n AS share, p.n / t2.n AS inverse_share
FROM pairs p
JOIN totals t1 ON t1.relation = p.r1
JOIN totals t2 ON t2.relation = p.r2
JOIN relations k1 ON k1.id = p.r1
JOIN relations k2 ON k2.id = p.r2
WHERE k1.key < k2.key AND p.n >= $min_support
ORDER BY least(p.n / t1.n, p.n / t2.n) DESC, k1.key, k2.key

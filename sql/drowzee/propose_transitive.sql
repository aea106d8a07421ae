-- Per relation: its two-step paths a -> b -> c (a <> c) and how many of them the relation closes (a -> c present).
WITH paths AS (
    SELECT DISTINCT x.relation, x.head AS a, y.tail AS c
    FROM triples x JOIN triples y ON y.head = x.tail AND y.relation = x.relation
    WHERE x.head <> y.tail AND x.head <> x.tail AND y.head <> y.tail
)
SELECT r.key, count(*) AS paths, count(t.head) AS closed, count(t.head) / count(*) AS share
FROM paths p
JOIN relations r ON r.id = p.relation
LEFT JOIN triples t ON t.head = p.a AND t.tail = p.c AND t.relation = p.relation
GROUP BY r.key
HAVING count(*) >= $min_support
ORDER BY share DESC, r.key

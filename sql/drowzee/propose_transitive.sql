-- Per relation: its two-step paths a -> b -> c (a <> c) and how many of them the relation closes (a -> c present).
-- A relation whose two-step paths (counted by aggregate: the sum over middles of in-degree times out-degree) exceed
-- $budget is measured on the paths of a fixed-hash sample of about 1 / every of its subjects a, every =
-- ceil(estimate / $budget), and its counts are scaled by every (estimates): enumerating every path through hub
-- entities costs sum(in-degree x out-degree), superlinear on a power-law KG. Below the budget: exact.
WITH fin AS (SELECT relation, tail AS m, count(*) AS n FROM triples GROUP BY relation, tail),
fout AS (SELECT relation, head AS m, count(*) AS n FROM triples GROUP BY relation, head),
est AS (
    SELECT i.relation, greatest(1, ceil(sum(i.n * o.n) / $budget))::BIGINT AS every
    FROM fin i JOIN fout o ON o.relation = i.relation AND o.m = i.m
    GROUP BY i.relation
),
xs AS (
    SELECT x.head, x.relation, x.tail, e.every FROM triples x JOIN est e ON e.relation = x.relation
    WHERE hash(x.head) % e.every = 0 AND x.head <> x.tail
),
paths AS (
    SELECT DISTINCT x.relation, x.every, x.head AS a, y.tail AS c
    FROM xs x JOIN triples y ON y.head = x.tail AND y.relation = x.relation
    WHERE x.head <> y.tail AND y.head <> y.tail
)
SELECT r.key, count(*) * any_value(p.every) AS paths, count(t.head) * any_value(p.every) AS closed,
       count(t.head) / count(*) AS share
FROM paths p
JOIN relations r ON r.id = p.relation
LEFT JOIN triples t ON t.head = p.a AND t.tail = p.c AND t.relation = p.relation
GROUP BY r.key
HAVING count(*) >= $min_support
ORDER BY share DESC, r.key

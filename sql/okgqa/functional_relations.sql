-- Relations that map each head to one tail in at least $min_share of their heads, among at least $min_subjects
-- heads: a claim with another object for such a relation contradicts the KG.
SELECT r.id, r.label
FROM (SELECT relation, head, count(DISTINCT tail) AS tails FROM triples GROUP BY relation, head) c
JOIN relations r ON r.id = c.relation
GROUP BY r.id, r.label
HAVING avg(CASE WHEN c.tails = 1 THEN 1.0 ELSE 0.0 END) >= $min_share AND count(*) >= $min_subjects
ORDER BY r.id

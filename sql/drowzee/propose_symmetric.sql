-- Per relation: how many of its edges also hold reversed (a symmetric relation reverses ~all of them).
SELECT r.key, count(*) AS edges, count(x.head) AS reversed, count(x.head) / count(*) AS share
FROM triples t
JOIN relations r ON r.id = t.relation
LEFT JOIN triples x ON x.head = t.tail AND x.tail = t.head AND x.relation = t.relation
WHERE t.head <> t.tail
GROUP BY r.key
HAVING count(*) >= $min_support
ORDER BY share DESC, r.key

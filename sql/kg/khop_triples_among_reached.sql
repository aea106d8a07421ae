-- The triples whose head and tail were both reached by some query of the pass (not necessarily the same query):
-- a superset of every query's induced triples, each KG row once, sorted. kgprobe.graph keeps, per query, the rows
-- whose two ends that query reached, so the queries of a pass share one read of their common triples.
WITH reached AS (SELECT DISTINCT node FROM _khop_reached)
SELECT t.head, t.relation, t.tail
FROM triples AS t
SEMI JOIN reached AS a ON a.node = t.head
SEMI JOIN reached AS b ON b.node = t.tail
ORDER BY t.head, t.relation, t.tail

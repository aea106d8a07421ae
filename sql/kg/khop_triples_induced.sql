-- Induced triples: every triple whose head and tail were both reached by the query (networkx.ego_graph's edges).
SELECT a.qid, t.head, t.relation, t.tail
FROM _khop_reached AS a
JOIN triples AS t ON t.head = a.node
JOIN _khop_reached AS b ON b.qid = a.qid AND b.node = t.tail
ORDER BY a.qid, t.head, t.relation, t.tail

-- Default (BFS-traversal) triples without a fan-out cap: every triple with at least one endpoint at distance
-- < $hops from a seed of the query, i.e. every edge the BFS walked along, in either direction.
SELECT qid, head, relation, tail
FROM (
    SELECT r.qid, t.head, t.relation, t.tail
    FROM _khop_reached AS r JOIN triples AS t ON t.head = r.node
    WHERE r.depth < $hops
    UNION
    SELECT r.qid, t.head, t.relation, t.tail
    FROM _khop_reached AS r JOIN triples AS t ON t.tail = r.node
    WHERE r.depth < $hops
)
ORDER BY qid, head, relation, tail

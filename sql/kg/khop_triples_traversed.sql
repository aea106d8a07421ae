-- Default (BFS-traversal) triples with a fan-out cap: the triples between each expanded node (distance < $hops)
-- and the neighbours it was allowed to expand to, in either direction, plus the expanded nodes' self loops.
SELECT qid, head, relation, tail
FROM (
    SELECT r.qid, t.head, t.relation, t.tail
    FROM _khop_reached AS r
    JOIN _khop_choice AS c ON c.node = r.node
    JOIN triples AS t ON t.head = c.node AND t.tail = c.nbr
    WHERE r.depth < $hops
    UNION
    SELECT r.qid, t.head, t.relation, t.tail
    FROM _khop_reached AS r
    JOIN _khop_choice AS c ON c.node = r.node
    JOIN triples AS t ON t.tail = c.node AND t.head = c.nbr
    WHERE r.depth < $hops
    UNION
    SELECT r.qid, t.head, t.relation, t.tail
    FROM _khop_reached AS r
    JOIN triples AS t ON t.head = r.node AND t.tail = r.node
    WHERE r.depth < $hops
)
ORDER BY qid, head, relation, tail

-- One BFS hop for every query at once: the chosen neighbours of the nodes at $depth that the query has not
-- reached yet, at distance $depth + 1.
INSERT INTO _khop_reached
SELECT DISTINCT f.qid, c.nbr AS node, $depth + 1 AS depth
FROM _khop_reached AS f
JOIN _khop_choice AS c ON c.node = f.node
WHERE f.depth = $depth
  AND NOT EXISTS (SELECT 1 FROM _khop_reached AS r WHERE r.qid = f.qid AND r.node = c.nbr)

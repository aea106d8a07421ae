-- One step of the walk from the objects of the edits out to the places that hold them, for the containment
-- relations read from the inside ($relations: "located in", "country", "part of"): (inner, outer) for each triple
-- inner -> relation -> outer whose inner is in the registered table _fpq_frontier. A join, so only the frontier's
-- triples come back; premise_holders_outward reads the relations read from the outside ("contains").
SELECT t.head AS inner, t.tail AS outer
FROM _fpq_frontier AS f
JOIN triples AS t ON t.head = f.entity
WHERE list_contains($relations::BIGINT[], t.relation)

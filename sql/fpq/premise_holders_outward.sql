-- One step of the walk out to the places that hold the frontier, for the containment relations read from the
-- outside ($relations: "contains"): (inner, outer) for each triple outer -> relation -> inner whose inner is in the
-- registered table _fpq_frontier. The other half of premise_holders_inward.
SELECT t.tail AS inner, t.head AS outer
FROM _fpq_frontier AS f
JOIN triples AS t ON t.tail = f.entity
WHERE list_contains($relations::BIGINT[], t.relation)

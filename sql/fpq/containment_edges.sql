-- The triples of the containment relations $relations that touch an entity of $frontier, at either end: one step
-- of the walk from a true object out to the places that hold it.
SELECT t.head, t.relation, t.tail
FROM triples AS t
WHERE list_contains($relations::BIGINT[], t.relation)
  AND (list_contains($frontier::BIGINT[], t.head) OR list_contains($frontier::BIGINT[], t.tail))

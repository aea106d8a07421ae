-- Entities of the types in $types that occur in a triple, with their label and type, in a seeded pseudo-random
-- order per type (md5 of seed and entity id: stable across DuckDB versions and table orders).
SELECT t.type, e.id, e.label
FROM entity_types t
JOIN entities e ON e.id = t.entity
WHERE list_contains($types, t.type)
  AND e.id IN (SELECT head FROM triples UNION SELECT tail FROM triples)
ORDER BY t.type, md5(concat($seed, ':', e.id)), e.id

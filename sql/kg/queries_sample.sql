-- Entities of each type (restricted to $types when given) that occur in a triple, in a seeded pseudo-random
-- order: md5 of (seed, entity id), stable across DuckDB versions and table orders.
SELECT t.type, t.entity
FROM entity_types t
WHERE t.entity IN (SELECT head FROM triples UNION SELECT tail FROM triples)
  AND ($types IS NULL OR list_contains($types, t.type))
ORDER BY t.type, md5(concat($seed, ':', t.entity)), t.entity

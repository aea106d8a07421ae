-- Entities (id, type) whose type is in $types: the candidates for a type-consistent false object. At most
-- $per_type of each type, the first by a seeded hash (every entity of a smaller type): a type of millions of entities
-- offers the same choice as one of a few thousand, at the cost of the few thousand.
SELECT t.entity, t.type FROM entity_types t
WHERE list_contains($types, t.type)
QUALIFY row_number() OVER (PARTITION BY t.type ORDER BY hash(t.entity, $seed), t.entity) <= $per_type
ORDER BY t.type, t.entity

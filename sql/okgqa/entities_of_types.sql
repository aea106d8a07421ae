-- Entities (id, label, type) whose type is in $types: the candidates for a type-consistent false object.
SELECT t.entity, e.label, t.type FROM entity_types t JOIN entities e ON e.id = t.entity
WHERE list_contains($types, t.type) ORDER BY t.type, t.entity

-- The subjects of the relations in $relations (keys) with their label and every type they have.
SELECT DISTINCT t.head, e.label, et.type_key, et.type
FROM triples AS t
JOIN relations AS r ON r.id = t.relation
JOIN entities AS e ON e.id = t.head
JOIN entity_types AS et ON et.entity = t.head
WHERE list_contains($relations::VARCHAR[], r.key)

-- Which of the names in $types occur in entity_types, as a type label or as a type key.
SELECT type AS name FROM entity_types WHERE list_contains($types, type)
UNION
SELECT type_key FROM entity_types WHERE list_contains($types, type_key)

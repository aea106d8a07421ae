-- The types of the entities in $ids.
SELECT entity, type FROM entity_types WHERE list_contains($ids, entity) ORDER BY entity, type

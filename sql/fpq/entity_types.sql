-- Entity types as (entity id, type_key) pairs: two entities are of the same type when they share a type_key.
SELECT DISTINCT entity, type_key FROM entity_types

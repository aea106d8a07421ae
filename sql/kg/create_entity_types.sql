-- Types (concepts) of entities: type is the readable type label, type_key the type's identifier in the source.
CREATE TABLE IF NOT EXISTS entity_types (entity BIGINT NOT NULL, type VARCHAR NOT NULL, type_key VARCHAR NOT NULL)

-- Entities of one KG, dictionary-encoded: id is the BIGINT used by every graph table.
CREATE TABLE IF NOT EXISTS entities (id BIGINT PRIMARY KEY, key VARCHAR NOT NULL UNIQUE, label VARCHAR NOT NULL)

-- Relations (predicates) of one KG, dictionary-encoded like entities.
CREATE TABLE IF NOT EXISTS relations (id BIGINT PRIMARY KEY, key VARCHAR NOT NULL UNIQUE, label VARCHAR NOT NULL)

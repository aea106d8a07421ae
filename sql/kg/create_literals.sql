-- Literal-valued facts (RDF literals, KoPL attributes); relation ids come from the relations table.
CREATE TABLE IF NOT EXISTS literals (entity BIGINT NOT NULL, relation BIGINT NOT NULL, value VARCHAR NOT NULL, datatype VARCHAR, lang VARCHAR)

-- Entity-to-entity facts; each (head, relation, tail) occurs once.
CREATE TABLE IF NOT EXISTS triples (head BIGINT NOT NULL, relation BIGINT NOT NULL, tail BIGINT NOT NULL)

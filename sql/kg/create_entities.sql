-- Entities of one KG, dictionary-encoded: id is the BIGINT used by every graph table. The load assigns ids
-- 0..n-1 in key order from the distinct keys, so id and key are unique by construction; the table carries no
-- index, which would cost more to build at 10M triples (about 1 s per 2M keys, and again at commit) than any
-- query here saves (they join and scan; none looks up single keys).
CREATE TABLE IF NOT EXISTS entities (id BIGINT NOT NULL, key VARCHAR NOT NULL, label VARCHAR NOT NULL)

-- Every triple whose head is in $ids (with its relation's functional flag computed by the caller): what the KG
-- says about the entities an answer may name.
SELECT head, relation, tail FROM triples WHERE head IN (SELECT unnest($ids)) ORDER BY head, relation, tail

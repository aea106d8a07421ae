-- Every entity-to-entity triple of one KG, as ids (the graph the KG-FPQ edits walk on).
SELECT head, relation, tail FROM triples

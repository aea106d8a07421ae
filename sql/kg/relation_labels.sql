-- Every relation of the KG: id, key and label (what a relation's words are read from).
SELECT id, key, label FROM relations ORDER BY id

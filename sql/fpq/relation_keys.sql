-- Every relation's id, key and label.
SELECT id, key, label FROM relations ORDER BY id

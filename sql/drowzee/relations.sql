-- Every relation of the KG: id, key and label.
SELECT id, key, label FROM relations ORDER BY id

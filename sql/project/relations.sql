-- Every relation with its key, label and triple count, most used first: what kgprobe init writes templates for.
SELECT r.id, r.key, r.label, count(*) AS n
FROM relations AS r JOIN triples AS t ON t.relation = r.id
GROUP BY r.id, r.key, r.label
ORDER BY n DESC, r.key

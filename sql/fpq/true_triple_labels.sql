-- Labels of the triples ($heads[i], $relations[i], $tails[i]) the KG-FPQ sample keeps, in that order (i).
WITH wanted AS (SELECT unnest($heads::BIGINT[]) AS head, unnest($relations::BIGINT[]) AS relation,
                       unnest($tails::BIGINT[]) AS tail, unnest(range(len($heads::BIGINT[]))) AS i)
SELECT w.head, w.relation, w.tail, s.label AS subject_label, r.key AS relation_key, r.label AS relation_label,
       o.label AS object_label
FROM wanted AS w
JOIN entities AS s ON s.id = w.head
JOIN entities AS o ON o.id = w.tail
JOIN relations AS r ON r.id = w.relation
ORDER BY w.i

-- Candidate true triples for KG-FPQ: triples whose subject has a type (label or key) in $types, with the
-- subject's matching types, minus the paper's rule (i): the object's label equals or is a substring of the
-- subject's label (case-insensitive).
SELECT
    t.head, t.relation, t.tail,
    s.label AS subject_label, r.key AS relation_key, r.label AS relation_label, o.label AS object_label,
    list(DISTINCT et.type) AS types, list(DISTINCT et.type_key) AS type_keys
FROM triples AS t
JOIN entity_types AS et ON et.entity = t.head
JOIN entities AS s ON s.id = t.head
JOIN entities AS o ON o.id = t.tail
JOIN relations AS r ON r.id = t.relation
WHERE (list_contains($types, et.type) OR list_contains($types, et.type_key))
  AND strpos(lower(s.label), lower(o.label)) = 0
GROUP BY t.head, t.relation, t.tail, s.label, r.key, r.label, o.label

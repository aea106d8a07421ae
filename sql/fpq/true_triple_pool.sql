-- The pool KG-FPQ samples true triples from, as ids: every triple whose subject has a type (label or key) of a
-- domain, with the position of the subject's first such domain ($domain_pos[i] is the position of the domain
-- naming $domain_type[i]), minus the paper's rule (i): the object's label equals or is a substring of the
-- subject's label (case-insensitive). The sample and the labels of what it keeps are read after, by id.
WITH named AS (SELECT unnest($domain_pos::BIGINT[]) AS pos, unnest($domain_type::VARCHAR[]) AS name),
typed AS (
    SELECT entity, min(pos) AS pos
    FROM (SELECT et.entity, n.pos FROM entity_types et JOIN named n ON n.name = et.type
          UNION ALL
          SELECT et.entity, n.pos FROM entity_types et JOIN named n ON n.name = et.type_key)
    GROUP BY entity
)
SELECT t.head, t.relation, t.tail, d.pos
FROM triples AS t
JOIN typed AS d ON d.entity = t.head
JOIN entities AS s ON s.id = t.head
JOIN entities AS o ON o.id = t.tail
WHERE strpos(lower(s.label), lower(o.label)) = 0

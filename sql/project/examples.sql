-- Up to $per triples of each relation with both labels, those whose labels are not ids ($pattern) first, then in a
-- stable order (a hash of the triple's ids): the triples proposed templates are rendered on.
SELECT relation, head_label, tail_label FROM (
    SELECT t.relation, h.label AS head_label, o.label AS tail_label,
           row_number() OVER (
               PARTITION BY t.relation
               ORDER BY (regexp_full_match(trim(h.label), $pattern) OR regexp_full_match(trim(o.label), $pattern)),
                        hash(t.head, t.tail), t.head, t.tail) AS k
    FROM triples AS t
    JOIN entities AS h ON h.id = t.head
    JOIN entities AS o ON o.id = t.tail
) WHERE k <= $per
ORDER BY relation, k

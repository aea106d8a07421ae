-- What the KG says about the entities an answer may name ($ids): every triple among them, and their facts of the
-- functional relations ($functional; a claim with another object contradicts them). At most $limit (NULL: all):
-- those touching a seed entity ($seeds) first, then the rest in a seeded hash order. A hub's other triples are
-- never read: it may head 10^5 of them.
SELECT head, relation, tail
FROM triples
WHERE head IN (SELECT unnest($ids))
  AND (tail IN (SELECT unnest($ids)) OR relation IN (SELECT unnest($functional)))
ORDER BY (head IN (SELECT unnest($seeds)) OR tail IN (SELECT unnest($seeds))) DESC, hash(head, relation, tail, $seed),
         head, relation, tail
LIMIT $limit
